#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "report/frame.h"
#include "report/profile.h"
#include "report/symbolizer.h"

namespace ebprof::report {

// What a sample counts for when two recordings are compared.
enum class Normalize {
  kNone,          // a sample: recordings of the same length and rate
  kTotal,         // a share of its own recording's samples (the default)
  kPerSecond,     // samples per second of recording
  kPerCpuSecond,  // samples per second per CPU recorded
};
Normalize parse_normalize(const std::string& name);  // throws Error

// How frames of the two recordings are matched.
enum class Join {
  kSymbol,   // by name: a rebuild of the same code still matches
  kAddress,  // by build-id and file offset (kernel frames by name: KASLR)
};
Join parse_join(const std::string& name);  // throws Error

// The value of one counted unit (a sample, or with --weight time a
// microsecond) of `side` (all its sources, `total` units in all) under `n`,
// and the unit that value is in ("%" for shares, "samples/s", "us/s", ...)
// when `unit` is what is counted.
double sample_value(std::span<const Profile> side, uint64_t total, Normalize n);
std::string value_unit(Normalize n, const std::string& unit);

// One stack of either recording with both sides' samples. Frames are the
// new recording's (the base's for a stack only it has).
struct DiffStack {
  std::string comm;
  Frames frames;  // leaf first
  uint64_t base = 0;
  uint64_t now = 0;
};

// The stacks of both sides joined by (comm, frames keyed by `join`).
std::vector<DiffStack> join_stacks(const std::vector<SymbolizedStack>& base,
                                   const std::vector<SymbolizedStack>& now, Join join);

// The joined stacks' base counts in the new side's units: what FlameGraph's
// differential mode and pprof need to compare like with like.
struct DiffScale {
  double base = 1;  // value of a base sample
  double now = 1;   // value of a new sample
  double base_in_new_samples() const { return now > 0 ? base / now : 0; }
};

// "stack BASE NEW" lines, flamegraph.pl/difffolded.pl style: root first,
// comm as the first frame; BASE in the new recording's sample units.
void write_diff_folded(std::ostream& out, const std::vector<DiffStack>& stacks, DiffScale scale);

// Functions (by self samples, the leaf frame) with base and new values and
// their difference, by absolute difference: those in both, those only new
// (appeared) and those only in the base (vanished).
// `counted` is what the stacks' counts are: "samples", or "us".
void write_diff_top(std::ostream& out, const Profile& base, const Profile& now,
                    const std::vector<DiffStack>& stacks, DiffScale scale, Normalize normalize,
                    int rows, const std::string& counted = "samples");

}  // namespace ebprof::report
