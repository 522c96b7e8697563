#pragma once

// Files a process names (JIT maps in its /tmp, the binaries it maps) are
// opened as that process sees them: inside its root. /proc/PID/root/PATH
// alone is not that: the kernel resolves an absolute symlink met on the
// way against the recorder's root, so a container whose /tmp links to
// "/etc" would have the recorder read, and embed, the host's files.

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/unique_fd.h"

namespace ebprof::record {

enum class RootResolver : uint8_t {
  kKernel,  // openat2(RESOLVE_IN_ROOT), where the kernel has it (Linux 5.6+)
  kOwn,     // component by component with O_NOFOLLOW: where it does not
};

// Opens absolute `path` inside the directory `root` (an O_PATH or
// O_DIRECTORY descriptor): every symlink on the way, and "..", stay inside
// it. `flags` as for open(2); O_NOFOLLOW refuses a link as the last
// component. Empty when there is no such file, or on any error.
UniqueFd open_in_root(int root, const std::string& path, int flags,
                      RootResolver resolver = RootResolver::kKernel);

// The same inside the root of process `pid` (/proc/PID/root).
UniqueFd open_in_process_root(uint32_t pid, const std::string& path, int flags);

}  // namespace ebprof::record
