#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "report/model/profile.h"

namespace ebprof::report {

// One sample as `--format script` prints it.
struct ScriptSample {
  const std::string& comm;
  const SampleKey& key;  // pid, tid, cpu; state off CPU
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC
  uint64_t period = 0;   // the sample's period, or the interval's length off CPU
  const std::string& event;
};

// One block per sample, like `perf script`: a line with comm, pid/tid,
// [cpu], time (CLOCK_MONOTONIC seconds), period and event, then one frame
// per line, leaf first: address, symbol+offset, (module path), and a blank
// line. Existing perf-script tooling (stackcollapse-perf.pl, grep) reads it.
void write_script_sample(std::ostream& out, const ScriptSample& sample, const FrameView& frames);

// The frame lines of one sample's block, and the blank line that ends it.
void write_script_frames(std::ostream& out, const FrameView& frames);

}  // namespace ebprof::report
