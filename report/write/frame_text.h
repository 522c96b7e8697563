#pragma once

// What writers print for the model's typed values: frame names, reasons,
// thread states, rates and losses. The only place they become text.

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "format/contents.h"
#include "report/model/frame.h"
#include "report/model/profile.h"

namespace ebprof::report {

// A frame as reports show it: its name, "[unknown] (libc.so.6+0x2724a,
// stripped without debuginfo)" for an unnamed one (never a guess), the
// off-CPU root "[off-cpu: S sleeping]", the waker separator "--".
std::string frame_name(const Frame& f);

// "binary not found", "stripped without debuginfo", ...
const char* reason_text(UnnamedReason reason);

// "on CPU", or why a thread was off it: "R preempted", "S sleeping", ...
const char* state_name(ThreadState state);

// What counts are: "samples" or "us".
const char* unit_name(Unit unit);

// "at 99 Hz" or "every 1000 events", "on every event".
std::string describe_rate(uint64_t frequency, uint64_t period);
inline std::string describe_rate(const RecordingSummary& s) {
  return describe_rate(s.sample_frequency, s.sample_period);
}

// "0", or the total with its causes: "12 (buffer full: 12)": of samples
// dropped, or with `sample_kept`, of samples written with partial stacks.
std::string describe_losses(std::span<const format::LossCount> totals, bool sample_kept = false);

// "none", or "binary not found in 12 samples (0.4%), ..." out of `total`,
// most first.
std::string describe_unnamed(std::vector<std::pair<UnnamedReason, uint64_t>> unnamed,
                             uint64_t total, const char* unit = "samples");

}  // namespace ebprof::report
