#include "report/symbolize/inflated_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <memory>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/elf_file.h"
#include "common/output_file.h"
#include "common/text.h"

namespace ebprof::report {
namespace {

// Only the reader can have written it.
bool private_to_us(const struct stat& st) {
  return st.st_uid == geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// Makes `dir` and its missing parents (mode 0700, as XDG asks of its
// directories); true when it is then a private directory of ours.
bool private_dir(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string part = dir.substr(0, slash);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      return false;
    if (slash == std::string::npos)
      break;
  }
  struct stat st {};
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && private_to_us(st);
}

std::string entry_path(const InflatedCache& cache, const std::string& build_id) {
  return cache.dir + "/" + hex_bytes(build_id) + ".debug";
}

// The Cache Directory Tagging Specification's tag (backup tools skip what
// it marks), saying whose cache it is.
constexpr std::string_view kTagName = "CACHEDIR.TAG";
constexpr std::string_view kTag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# ebprof-report's cache of inflated debuginfo: it removes only the\n"
    "# BUILD-ID.debug files it wrote here.\n";

// An entry of ours: BUILD-ID.debug (hex), a regular file of ours, an ELF
// file (what keep_inflated writes).
bool is_entry(int dir, const std::string& name) {
  constexpr std::string_view kSuffix = ".debug";
  const size_t hex = name.size() - std::min(name.size(), kSuffix.size());
  if (hex < 2 || hex % 2 || !name.ends_with(kSuffix) ||
      name.find_first_not_of("0123456789abcdef") < hex)
    return false;
  UniqueFd fd(openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  char magic[4] = {};
  return fd && fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && private_to_us(st) &&
         pread(fd.get(), magic, sizeof magic, 0) == sizeof magic &&
         std::string_view(magic, 4) ==
             "\x7f"
             "ELF";
}

// Whether `dir` (private, ours) is the cache's to write and trim: tagged
// as ours, or holding nothing but entries (an untagged cache of an older
// ebprof-report), which it is tagged now.
bool ours(const std::string& dir) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(dir.c_str()), closedir);
  if (!d)
    return false;
  {
    UniqueFd tag(openat(dirfd(d.get()), std::string(kTagName).c_str(),
                        O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    char text[kTag.size()];
    if (tag && pread(tag.get(), text, sizeof text, 0) == ssize_t(sizeof text) &&
        std::string_view(text, sizeof text) == kTag)
      return true;
  }
  while (const dirent* e = readdir(d.get())) {
    const std::string name = e->d_name;
    if (name != "." && name != ".." && !is_entry(dirfd(d.get()), name))
      return false;
  }
  UniqueFd tag(openat(dirfd(d.get()), std::string(kTagName).c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  return tag && write(tag.get(), kTag.data(), kTag.size()) == ssize_t(kTag.size());
}

// Removes the files used longest ago (a hit touches its file) until the
// rest fit the limit; `kept` stays whatever its size.
void trim(const InflatedCache& cache, const std::string& kept) {
  struct Entry {
    std::string path;
    uint64_t size;
    timespec used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(cache.dir.c_str()), closedir);
  if (!dir)
    return;
  while (const dirent* e = readdir(dir.get())) {
    struct stat st {};
    const std::string path = cache.dir + "/" + e->d_name;
    if (!is_entry(dirfd(dir.get()), e->d_name) ||
        fstatat(dirfd(dir.get()), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    total += static_cast<uint64_t>(st.st_size);
    if (path != kept)
      entries.push_back({path, static_cast<uint64_t>(st.st_size), st.st_mtim});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.used.tv_sec, a.used.tv_nsec) < std::tie(b.used.tv_sec, b.used.tv_nsec);
  });
  for (const Entry& e : entries) {
    if (total <= cache.limit)
      break;
    if (unlink(e.path.c_str()) == 0)
      total -= e.size;
  }
}

}  // namespace

std::string default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/')
    return std::string(xdg) + "/ebprof";
  if (const char* home = std::getenv("HOME"); home && *home == '/')
    return std::string(home) + "/.cache/ebprof";
  return "";
}

UniqueFd find_inflated(const InflatedCache& cache, const std::string& build_id) {
  if (cache.dir.empty() || build_id.empty())
    return {};
  UniqueFd fd(::open(entry_path(cache, build_id).c_str(),
                     O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat st {};
  if (!fd || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || !private_to_us(st))
    return {};
  try {
    if (read_elf_identity("/proc/self/fd/" + std::to_string(fd.get())).build_id != build_id)
      return {};
  } catch (const std::exception&) {
    return {};  // not an ELF file: damaged, or not ours
  }
  futimens(fd.get(), nullptr);  // used now: the last to be trimmed
  return fd;
}

void keep_inflated(const InflatedCache& cache, const std::string& build_id,
                   std::span<const char> image) {
  if (cache.dir.empty() || build_id.empty() || image.size() > cache.limit ||
      !private_dir(cache.dir))
    return;
  if (!ours(cache.dir)) {
    static std::set<std::string> warned;
    if (cache.warn && warned.insert(cache.dir).second)
      cache.warn("--cache-dir " + cache.dir +
                 " holds files ebprof-report did not write: not used as its cache (which "
                 "removes what it wrote when full); give it a new or empty directory");
    return;
  }
  const std::string path = entry_path(cache, build_id);
  try {
    write_replacing(path, "--cache-dir", [&](std::ostream& out) {
      out.write(image.data(), static_cast<std::streamsize>(image.size()));
    });
  } catch (const std::exception&) {
    return;  // a full disk, a read-only home: the next report inflates again
  }
  trim(cache, path);
}

}  // namespace ebprof::report
