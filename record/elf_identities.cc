#include "record/elf_identities.h"

#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "common/error.h"

namespace ebprof::record {

ElfIdentity ElfIdentities::lookup(uint32_t pid, const format::Mapping& m) {
  if (m.path.empty() || m.path[0] != '/')
    return {};  // anonymous memory and pseudo-files ([vdso]) have no file
  char map_file[96];
  std::snprintf(map_file, sizeof map_file, "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m.start,
                m.end);
  std::string root_path = "/proc/" + std::to_string(pid) + "/root" + m.path;
  for (const std::string& path : {std::string(map_file), root_path}) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0)
      continue;
    auto key = std::make_pair(st.st_dev, st.st_ino);
    if (auto it = cache_.find(key); it != cache_.end())
      return it->second;
    try {
      return cache_[key] = read_elf_identity(path);
    } catch (const Error&) {
      return cache_[key] = ElfIdentity{};  // not an ELF file: nothing to verify
    }
  }
  return {};
}

}  // namespace ebprof::record
