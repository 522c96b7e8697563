#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "report/profile.h"

namespace ebprof::report {

// `ebprof-report info`: what a recording is (host, command, event, time),
// what it holds (samples, stacks, processes, losses, embedded symbols) and
// what each kind of frame costs on disk.
// `unnamed` is what unnamed_by_reason() says of the recording's stacks. For
// a merged file, call it once per source.
void write_info(std::ostream& out, const Profile& profile,
                const std::vector<std::pair<std::string, uint64_t>>& unnamed);

}  // namespace ebprof::report
