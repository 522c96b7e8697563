#pragma once

#include <ostream>

#include "report/run/plan.h"

namespace ebprof::report {

// Carries out `plan`: load → symbolize → aggregate → write, or info, dump,
// diff or merge, with the report going to -o or stdout. Throws Error, one
// line, when it cannot.
void run_report(const Plan& plan);

// The report of `plan` (any command but merge) written to `out`.
void write_report(const Plan& plan, std::ostream& out);

}  // namespace ebprof::report
