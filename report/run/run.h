#pragma once

#include <memory>
#include <ostream>

#include "report/run/plan.h"

namespace ebprof::report {

// What a report built (recordings, profiles, the files it opened), for
// its caller to free when done, or to leave to the process's exit.
class Stages;
struct StagesDelete {
  void operator()(Stages* stages) const;
};
using KeptStages = std::unique_ptr<Stages, StagesDelete>;

// Carries out `plan`: load → resolve → aggregate → write, or info, dump,
// diff or merge, with the report going to -o or stdout. Throws Error, one
// line, when it cannot.
KeptStages run_report(const Plan& plan);

// The report of `plan` (any command but merge) written to `out`.
void write_report(const Plan& plan, std::ostream& out);

}  // namespace ebprof::report
