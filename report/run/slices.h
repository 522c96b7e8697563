#pragma once

// --split's sink: instead of one stream, a directory of files, one per
// slice of wall-clock time that holds samples, each a profile of its own.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "report/model/profile.h"

namespace ebprof::report {

using SliceWriter = std::function<void(std::ostream& out, const Profile& slice)>;

// Writes each slice of `profile` (its stacks by SampleKey::slice, slices
// `split_ns` long) with `write` into `dir`, made if need be, as
// YYYYmmddTHHMMSSZ`extension` after the slice's start (UTC), its summary
// starting and lasting as the slice does: one upload each to a
// continuous-profiling backend (Pyroscope, Parca). Returns how many it
// wrote. Throws Error when `dir` cannot be made or written.
size_t write_slices(const std::string& dir, const Profile& profile, uint64_t split_ns,
                    const std::string& extension, const SliceWriter& write);

}  // namespace ebprof::report
