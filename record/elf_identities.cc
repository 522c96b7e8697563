#include "record/elf_identities.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "common/error.h"
#include "record/in_root.h"

namespace ebprof::record {

std::vector<MappedFile> mapped_file_paths(uint32_t pid, const format::Mapping& m) {
  if (m.path.empty() || m.path[0] != '/')
    return {};
  char map_file[96];
  std::snprintf(map_file, sizeof map_file, "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m.start,
                m.end);
  std::vector<MappedFile> files;
  files.push_back({map_file, {}});
  // Only a regular file: what is read through the path opens it again.
  UniqueFd in_root = open_in_process_root(pid, m.path, O_PATH);
  struct stat st {};
  if (in_root && fstat(in_root.get(), &st) == 0 && S_ISREG(st.st_mode))
    files.push_back({"/proc/self/fd/" + std::to_string(in_root.get()), std::move(in_root)});
  return files;
}

std::vector<MappedFile> build_id_checked_paths(uint32_t pid, const format::Mapping& m) {
  std::vector<MappedFile> files = mapped_file_paths(pid, m);
  if (!files.empty())
    files.push_back({m.path, {}});
  return files;
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
    for (const MappedFile& file : build_id_checked_paths(pid, m)) {
      const std::string& path = file.path;
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

ElfIdentity ElfIdentities::read_cached(const std::string& path, const struct stat& st) {
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

ElfIdentity ElfIdentities::lookup(uint32_t pid, const format::Mapping& m) {
  for (const MappedFile& file : mapped_file_paths(pid, m)) {
    struct stat st {};
    if (stat(file.path.c_str(), &st) == 0)
      return read_cached(file.path, st);
  }
  return {};
}

void ElfIdentities::identify(uint32_t pid, format::Mapping& m, uint64_t device, uint64_t inode) {
  if (!m.build_id.empty() || m.path.empty() || m.path[0] != '/')
    return;
  ElfIdentity id = lookup(pid, m);
  if (id.build_id.empty() && inode != 0) {
    // Gone: the path as this process sees it, only if it names that file.
    struct stat st {};
    if (stat(m.path.c_str(), &st) == 0 && st.st_dev == device && st.st_ino == inode)
      id = read_cached(m.path, st);
  }
  m.build_id = std::move(id.build_id);
  m.debuglink = std::move(id.debuglink);
}

}  // namespace ebprof::record
