#pragma once

#include <optional>

#include "record/options.h"

namespace ebprof::record {

// Parses ebprof-record's command line into `options`. Returns the exit
// status when parsing is all there is to do (--help, a malformed command
// line, said in one line), nullopt when the recording is to run.
std::optional<int> parse_command_line(int argc, char** argv, RecordOptions& options);

}  // namespace ebprof::record
