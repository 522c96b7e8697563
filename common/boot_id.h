#pragma once

#include <string>

namespace ebprof {

// This boot of this machine (/proc/sys/kernel/random/boot_id: a UUID the
// kernel draws at boot); "" when unreadable. A recording made in this boot
// may still find its processes' files where they were.
std::string this_boot_id();

}  // namespace ebprof
