#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <utility>

#include "common/elf_file.h"
#include "format/recording.h"

namespace ebprof::record {

// Build-ids and debuglinks of the files processes map, so a report can tell
// whether the binary it finds is the one that ran. Each file (device, inode)
// is read once, however many processes map it.
class ElfIdentities {
 public:
  // The identity of the file mapped at `m` in process `pid`, read through
  // /proc/PID/map_files/START-END: the very file mapped, even when it was
  // deleted or lives in another mount namespace (a container). Falls back to
  // /proc/PID/root/PATH. Empty when neither can be read.
  ElfIdentity lookup(uint32_t pid, const format::Mapping& m);

 private:
  std::map<std::pair<dev_t, ino_t>, ElfIdentity> cache_;
};

}  // namespace ebprof::record
