#include "record/cgroup_paths.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <string_view>

#include "record/proc_file.h"

namespace ebprof::record {
namespace {

// How kernfs (the cgroup filesystem) names a directory in a file handle:
// its 64-bit id, which is the cgroup id (include/linux/exportfs.h).
constexpr int kFileIdKernfs = 0xfe;

}  // namespace

std::optional<std::string> cgroup2_mount() {
  std::string mounts;
  if (try_read_proc_file("/proc/self/mounts", mounts) == 0) {
    std::string_view text = mounts;
    while (!text.empty()) {
      std::string_view line = take_line(text);
      // device mountpoint type options ...
      size_t a = line.find(' '), b = line.find(' ', a + 1), c = line.find(' ', b + 1);
      if (c != std::string_view::npos && line.substr(b + 1, c - b - 1) == "cgroup2")
        return std::string(line.substr(a + 1, b - a - 1));
    }
  }
  return std::nullopt;
}

CgroupPaths::CgroupPaths() : root_(cgroup2_mount()) {
  if (root_)
    mount_ = UniqueFd(open(root_->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

std::string CgroupPaths::path(uint64_t id) {
  auto found = paths_.find(id);
  if (found != paths_.end())
    return found->second;
  if (paths_.size() >= kMaxRemembered)
    paths_.clear();
  std::string& path = paths_[id];
  if (!mount_ || id == 0)
    return path;
  alignas(file_handle) unsigned char buffer[sizeof(file_handle) + sizeof id];
  auto* handle = reinterpret_cast<file_handle*>(buffer);
  handle->handle_bytes = sizeof id;
  handle->handle_type = kFileIdKernfs;
  std::memcpy(handle->f_handle, &id, sizeof id);
  UniqueFd dir(open_by_handle_at(mount_.get(), handle, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir)
    return path;
  char target[4096];
  const ssize_t n =
      readlink(("/proc/self/fd/" + std::to_string(dir.get())).c_str(), target, sizeof target);
  // The hierarchy's root is "/"; anything else is below it.
  if (n > 0 && size_t(n) < sizeof target) {
    const std::string_view full(target, size_t(n));
    if (full == *root_)
      path.assign(1, '/');
    else if (full.starts_with(*root_) && full.substr(root_->size()).starts_with("/"))
      path = full.substr(root_->size());
  }
  return path;
}

}  // namespace ebprof::record
