#pragma once

#include <ostream>
#include <span>
#include <string>

#include "report/frame.h"
#include "report/profile.h"
#include "report/sample_filter.h"
#include "report/stack_filter.h"
#include "report/user_symbolizer.h"

namespace ebprof::report {

// One block per sample, in file order, like `perf script`: a line with
// comm, pid/tid, [cpu], time (CLOCK_MONOTONIC seconds), period and event,
// then one frame per line, leaf first: address, symbol+offset, (module
// path), and a blank line. Existing perf-script tooling (stackcollapse-perf.pl,
// grep) reads it. `sources` hold the recording's tables (load_profiles: one
// per source of a merged file); its samples are read again from `path`, so
// memory stays bounded by distinct stacks.
void write_script(std::ostream& out, const std::string& path, std::span<const Profile> sources,
                  const SampleFilter& samples, const StackFilter& stacks,
                  SymbolizeOptions symbols = {});

// The frame lines of one sample's block, and the blank line that ends it.
void write_script_frames(std::ostream& out, std::span<const Frame> frames);

}  // namespace ebprof::report
