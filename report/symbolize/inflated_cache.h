#pragma once

// Debuginfo inflated once is kept on disk by build-id for the reports
// after it, as perf keeps ~/.debug and debuginfod its own cache: inflating
// libc6-dbg's DWARF is 40% of a small dwarf report, paid again by every
// view of the same recording. A file in the cache names frames, so one
// that another user could have put there is never read: the directory and
// its files must be the reader's own and writable by no one else. A cache
// that cannot be read or written is a miss, never an error. The cache
// removes only what it wrote, in a directory it made or found empty (and
// tagged, CACHEDIR.TAG): --cache-dir . once deleted a user's recordings.

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "common/unique_fd.h"

namespace ebprof::report {

struct InflatedCache {
  std::string dir;  // "" for none (--no-cache)
  // What the directory may hold; past it, the files used longest ago go.
  uint64_t limit = uint64_t{1} << 30;
  // Says, once, why a directory is not used (it holds others' files).
  std::function<void(const std::string& message)> warn;
};

// $XDG_CACHE_HOME/ebprof, else $HOME/.cache/ebprof; "" when neither is set.
std::string default_cache_dir();

// The cached inflated copy of the file whose build-id (raw bytes) is
// `build_id`, open for reading; invalid when there is none to trust.
UniqueFd find_inflated(const InflatedCache& cache, const std::string& build_id);

// Keeps `image`, the inflated copy of a file with build-id `build_id`, then
// trims the directory to its limit, removing only entries it wrote. A
// directory that holds anything else is not written to (warn says so).
void keep_inflated(const InflatedCache& cache, const std::string& build_id,
                   std::span<const char> image);

}  // namespace ebprof::report
