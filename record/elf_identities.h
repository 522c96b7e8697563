#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/elf_file.h"
#include "common/unique_fd.h"
#include "format/contents.h"

namespace ebprof::record {

// One way to open a file a process maps: `path`, and when that path names
// a descriptor of ours (/proc/self/fd/N), the descriptor, open as long as
// this is.
struct MappedFile {
  std::string path;
  UniqueFd fd;
};

// Where the file mapped at `m` in process `pid` can be opened, best first:
// /proc/PID/map_files/START-END is the very file mapped, even when it was
// deleted or lives in another mount namespace (a container); the fallback
// is the mapped path looked up inside the process's root (open_in_root:
// its symlinks cannot lead to the recorder's files). None for anonymous
// memory and pseudo-files ([vdso]).
std::vector<MappedFile> mapped_file_paths(uint32_t pid, const format::Mapping& m);

// mapped_file_paths(), then the mapped path as this process sees it, which
// still works after the process exited. Only for callers that check the
// build-id of what they open: the path may name a newer file.
std::vector<MappedFile> build_id_checked_paths(uint32_t pid, const format::Mapping& m);

// Build-ids and debuglinks of the files processes map, so a report can tell
// whether the binary it finds is the one that ran. Each file (device, inode)
// is read once, however many processes map it.
class ElfIdentities {
 public:
  // The identity of the file mapped at `m` in process `pid`, read through
  // mapped_file_paths(). Empty when none can be read.
  ElfIdentity lookup(uint32_t pid, const format::Mapping& m);

  // Fills in the identity of the file process `pid` maps at `m`, unless
  // its build-id is known already: through the process while it lives,
  // else, given the `device` and `inode` an MMAP2 record named, through its
  // path if that still names the very same file (a process of a few
  // milliseconds is gone when its record is read).
  void identify(uint32_t pid, format::Mapping& m, uint64_t device = 0, uint64_t inode = 0);

 private:
  // A file replaced in place (cp over it) or a reused inode must not keep an
  // old identity: change time and size are part of the key.
  struct Key {
    dev_t dev;
    ino_t inode;
    int64_t ctime_ns;
    off_t size;
    auto operator<=>(const Key&) const = default;
  };
  // The identity of the file at `path` with this stat, read once per file.
  ElfIdentity read_cached(const std::string& path, const struct stat& st);

  // So many files at most, then all read again as met (a host that deploys
  // new builds for weeks would otherwise grow it without end).
  static constexpr size_t kMaxCached = 1 << 16;
  std::map<Key, ElfIdentity> cache_;
};

}  // namespace ebprof::record
