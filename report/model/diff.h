#pragma once

// The report's profile model, part 5: two recordings side by side, what
// diff writers are given.

#include <cstdint>
#include <string>
#include <vector>

#include "report/model/profile.h"

namespace ebprof::report {

// What a sample counts for when two recordings are compared.
enum class Normalize : uint8_t {
  kNone,          // a sample: recordings of the same length and rate
  kTotal,         // a share of its own recording's samples (the default)
  kPerSecond,     // samples per second of recording
  kPerCpuSecond,  // samples per second per CPU recorded
};

// One stack of either recording with both sides' counts. Frames are the
// new recording's (the base's for a stack only it has).
struct DiffStack {
  std::string comm;
  FrameView frames;  // leaf first
  uint64_t base = 0;
  uint64_t now = 0;
};

// What one count of each side is worth under the normalization.
struct DiffScale {
  double base = 1;  // value of a base count
  double now = 1;   // value of a new count
  // A base count in the new side's counts: what FlameGraph's differential
  // mode and pprof need to compare like with like.
  double base_in_new() const { return now > 0 ? base / now : 0; }
};

struct DiffProfile {
  RecordingSummary base, now;
  Unit unit = Unit::kSamples;
  Normalize normalize = Normalize::kTotal;
  DiffScale scale;
  std::vector<DiffStack> stacks;
};

}  // namespace ebprof::report
