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
    // What the report built is left to the exit, not freed: freeing a large
    // report's many small objects one by one took a tenth of its run
    // (clang's -disable-free skips it for the same reason). Held by a
    // global, it is still reachable at exit: no leak to LeakSanitizer.
    static auto* left_to_exit = run_report(make_plan(options)).release();
    static_cast<void>(left_to_exit);
  });
}
