#pragma once

#include <cstdint>
#include <ostream>
#include <utility>
#include <vector>

#include "report/model/facts.h"

namespace ebprof::report {

// `ebprof-report info`: what a recording is (host, command, event, time),
// what it holds (samples, stacks, processes, losses, embedded symbols) and
// what each kind of frame costs on disk. `unnamed` is unnamed_by_reason()
// of its stacks. For a merged file, one call per source.
void write_info(std::ostream& out, const RecordingFacts& facts,
                const std::vector<std::pair<UnnamedReason, uint64_t>>& unnamed,
                const UnwindCounts& unwound = {});

}  // namespace ebprof::report
