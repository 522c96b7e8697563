// ebprof-report: reads a recording anywhere and writes a report.
#include "common/main_guard.h"
#include "report/run/cli.h"
#include "report/run/plan.h"
#include "report/run/run.h"

int main(int argc, char** argv) {
  using namespace ebprof::report;
  ReportOptions options;
  if (std::optional<int> status = parse_command_line(argc, argv, options))
    return *status;
  return ebprof::run_guarded("ebprof-report", [&] {
    Plan plan = make_plan(options);
    plan.free_at_end = false;
    run_report(plan);
  });
}
