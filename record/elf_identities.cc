#include "record/elf_identities.h"

#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "common/error.h"

namespace ebprof::record {

std::vector<std::string> mapped_file_paths(uint32_t pid, const format::Mapping& m) {
  if (m.path.empty() || m.path[0] != '/')
    return {};
  char map_file[96];
  std::snprintf(map_file, sizeof map_file, "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m.start,
                m.end);
  return {map_file, "/proc/" + std::to_string(pid) + "/root" + m.path};
}

std::vector<std::string> build_id_checked_paths(uint32_t pid, const format::Mapping& m) {
  std::vector<std::string> paths = mapped_file_paths(pid, m);
  if (!paths.empty())
    paths.push_back(m.path);
  return paths;
}

void ElfIdentities::complete(uint32_t pid, format::Mapping& m) {
  if (m.build_id.empty()) {
    ElfIdentity id = lookup(pid, m);
    m.build_id = std::move(id.build_id);
    m.debuglink = std::move(id.debuglink);
    return;
  }
  auto [it, inserted] = debuglinks_.try_emplace(m.build_id);
  if (inserted) {
    for (const std::string& path : build_id_checked_paths(pid, m)) {
      try {
        ElfIdentity id = read_elf_identity(path);
        if (id.build_id == m.build_id) {
          it->second = std::move(id.debuglink);
          break;
        }
      } catch (const Error&) {
        // Gone or unreadable through this path: try the next.
      }
    }
  }
  m.debuglink = it->second;
}

ElfIdentity ElfIdentities::lookup(uint32_t pid, const format::Mapping& m) {
  for (const std::string& path : mapped_file_paths(pid, m)) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0)
      continue;
    Key key{st.st_dev, st.st_ino, st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec,
            st.st_size};
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
