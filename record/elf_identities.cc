#include "record/elf_identities.h"

#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "common/error.h"
#include "record/in_root.h"

namespace ebprof::record {
namespace {

// The kernel's vDSO as this process has it, in a memfd: an ELF image with
// no file, the same in every 64-bit process of this kernel.
struct Vdso {
  UniqueFd fd;
  std::string path;  // /proc/self/fd/N
  std::string image;
};

const Vdso* own_vdso() {
  static const std::unique_ptr<Vdso> vdso = []() -> std::unique_ptr<Vdso> {
    const auto* base = reinterpret_cast<const char*>(getauxval(AT_SYSINFO_EHDR));
    if (!base)
      return nullptr;
    // Its size: the [vdso] line of this process's maps.
    FILE* maps = std::fopen("/proc/self/maps", "re");
    if (!maps)
      return nullptr;
    char line[512];
    uint64_t start = 0, end = 0;
    while (std::fgets(line, sizeof line, maps))
      if (std::strstr(line, "[vdso]") &&
          std::sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2)
        break;
    std::fclose(maps);
    if (start != reinterpret_cast<uint64_t>(base) || end <= start)
      return nullptr;
    auto v = std::make_unique<Vdso>();
    v->image.assign(base, end - start);
    v->fd = UniqueFd(memfd_create("ebprof-vdso", MFD_CLOEXEC));
    if (!v->fd || write(v->fd.get(), v->image.data(), v->image.size()) != ssize_t(v->image.size()))
      return nullptr;
    v->path = "/proc/self/fd/" + std::to_string(v->fd.get());
    return v;
  }();
  return vdso.get();
}

// Whether process `pid` maps at `m` the vDSO this process has: the same
// bytes (a 32-bit process has another). A process already gone, as one of a
// second or less often is when its maps are captured, cannot be read: its
// vDSO is ours when it lies where only a 64-bit process maps one, above
// 4 GiB (an x32 or ia32 process's address space ends below).
bool maps_own_vdso(uint32_t pid, const format::Mapping& m, const Vdso& vdso) {
  if (m.end - m.start != vdso.image.size())
    return false;
  std::string theirs(vdso.image.size(), '\0');
  UniqueFd mem(open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
  if (!mem || pread(mem.get(), theirs.data(), theirs.size(), static_cast<off_t>(m.start)) !=
                  ssize_t(theirs.size()))
    return m.start >= (uint64_t{1} << 32);
  return theirs == vdso.image;
}

}  // namespace

std::vector<MappedFile> mapped_file_paths(uint32_t pid, const format::Mapping& m) {
  if (m.path == "[vdso]") {
    const Vdso* vdso = own_vdso();
    std::vector<MappedFile> files;
    if (vdso && maps_own_vdso(pid, m, *vdso))
      files.push_back({vdso->path, {}});
    return files;
  }
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

ElfIdentity ElfIdentities::read_cached(const std::string& path, const struct stat& st) {
  Key key{st.st_dev, st.st_ino, st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec,
          st.st_size};
  if (auto it = cache_.find(key); it != cache_.end())
    return it->second;
  if (cache_.size() >= kMaxCached)
    cache_.clear();
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
  if (!m.build_id.empty())
    return;  // known already, its debuglink with it
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
