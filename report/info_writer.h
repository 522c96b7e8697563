#pragma once

#include <ostream>
#include <string>

#include "report/profile.h"

namespace ebprof::report {

// `ebprof-report info`: what a recording is (host, command, event, time),
// what it holds (samples, stacks, processes, losses, embedded symbols) and
// what each kind of frame costs on disk.
void write_info(std::ostream& out, const std::string& path, const Profile& profile);

}  // namespace ebprof::report
