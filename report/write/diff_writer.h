#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "report/model/diff.h"

namespace ebprof::report {

// "stack BASE NEW" lines, flamegraph.pl/difffolded.pl style: root first,
// comm as the first frame; BASE in the new recording's units.
void write_diff_folded(std::ostream& out, const DiffProfile& diff);

// Functions (by self value, the leaf frame, or with `children` by the
// stacks they are on) with base and new values and their difference, by
// absolute difference: those in both, those only new (appeared) and those
// only in the base (vanished). `rows` per section (0: all).
void write_diff_top(std::ostream& out, const DiffProfile& diff, size_t rows, bool children);

// What a normalized value is in: "%" for shares, "samples/s", "us/CPU-s"...
std::string value_unit(Normalize n, Unit unit);

}  // namespace ebprof::report
