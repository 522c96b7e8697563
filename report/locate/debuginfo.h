#pragma once

#include <string>
#include <vector>

namespace ebprof::report {

// Where a report looks for the files that name a recorded binary's frames.
struct SymbolSources {
  std::string symfs;  // --symfs: a root the recorded paths and debug directories are under
  std::vector<std::string> debug_dirs = {"/usr/lib/debug"};
};

// The recorded binary's own path, under --symfs when one is given.
std::string binary_path(const SymbolSources& sources, const std::string& path);

// Separate debuginfo files that may hold `path`'s full symbols, best first,
// as gdb and perf look for them: by build-id in each debug directory
// (.build-id/ab/cdef....debug), then by .gnu_debuglink name next to the
// binary, in its .debug/ subdirectory and under each debug directory. The
// caller must check each file's build-id: a debuglink is only a name.
// `build_id` is raw bytes; either it or `debuglink` may be empty.
std::vector<std::string> debuginfo_paths(const SymbolSources& sources, const std::string& path,
                                         const std::string& build_id, const std::string& debuglink);

}  // namespace ebprof::report
