#pragma once

#include "report/load/recording.h"
#include "report/model/facts.h"

namespace ebprof::report {

// What `info` says of `recording`: its header, counts, losses and sections.
RecordingFacts describe_recording(const Recording& recording);

}  // namespace ebprof::report
