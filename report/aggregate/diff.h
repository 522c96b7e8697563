#pragma once

// Two aggregated recordings joined stack by stack, for `diff`.

#include <cstdint>

#include "report/model/diff.h"
#include "report/model/profile.h"

namespace ebprof::report {

// How frames of the two recordings are matched.
enum class Join : uint8_t {
  kSymbol,   // by name: a rebuild of the same code still matches
  kAddress,  // by build-id and file offset (kernel frames by name: KASLR)
};

// The value of one count of a side whose counts add up to `total`, under `n`.
double count_value(const RecordingSummary& side, uint64_t total, Normalize n);

// The stacks of both sides joined by comm and frames (keyed by `join`),
// each side's counts valued under `normalize`.
DiffProfile join_profiles(const Profile& base, const Profile& now, Normalize normalize, Join join);

}  // namespace ebprof::report
