#pragma once

#include "record/options.h"

namespace ebprof::record {

// One recording from start to finish: checks the targets, loads and attaches
// BPF, runs the workload, streams samples to the file until the duration
// passes, the workload or every target exits, or SIGINT/SIGTERM arrives.
// Prints a one-line summary to stderr. Throws Error on failure.
void run_session(const RecordOptions& options);

}  // namespace ebprof::record
