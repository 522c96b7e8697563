#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/elf_file.h"
#include "format/recording.h"

namespace ebprof::record {

// Where the file mapped at `m` in process `pid` can be opened, best first:
// /proc/PID/map_files/START-END is the very file mapped, even when it was
// deleted or lives in another mount namespace (a container);
// /proc/PID/root/PATH is the fallback. None for anonymous memory and
// pseudo-files ([vdso]).
std::vector<std::string> mapped_file_paths(uint32_t pid, const format::Mapping& m);

// Build-ids and debuglinks of the files processes map, so a report can tell
// whether the binary it finds is the one that ran. Each file (device, inode)
// is read once, however many processes map it.
class ElfIdentities {
 public:
  // The identity of the file mapped at `m` in process `pid`, read through
  // mapped_file_paths(). Empty when none can be read.
  ElfIdentity lookup(uint32_t pid, const format::Mapping& m);

 private:
  std::map<std::pair<dev_t, ino_t>, ElfIdentity> cache_;
};

}  // namespace ebprof::record
