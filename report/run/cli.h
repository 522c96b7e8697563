#pragma once

#include <optional>

#include "report/run/options.h"

namespace ebprof::report {

// Parses ebprof-report's command line into `options`. Returns the exit
// status when parsing is all there is to do (--help, a malformed command
// line, said in one line), nullopt when the report is to run.
std::optional<int> parse_command_line(int argc, char** argv, ReportOptions& options);

}  // namespace ebprof::report
