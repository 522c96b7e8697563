#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/unique_fd.h"

namespace ebprof::record {

// Where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup on most systems,
// /sys/fs/cgroup/unified on hybrid ones; nullopt on a host with cgroup v1
// alone.
std::optional<std::string> cgroup2_mount();

// The paths of cgroup v2 ids (what BPF's bpf_get_current_cgroup_id gives,
// the cgroup directory's inode) in the hierarchy, as `-G` takes them and
// systemd and Kubernetes name them: "/system.slice/nginx.service". An id
// is opened as a file handle of the cgroup filesystem, which needs
// CAP_DAC_READ_SEARCH; a cgroup removed before its first sample was read,
// or an id that cannot be opened, has no path ("").
class CgroupPaths {
 public:
  CgroupPaths();
  // Whether there is a cgroup v2 hierarchy: without, the id BPF gives is
  // its root's, which stands for nothing.
  bool available() const { return root_.has_value(); }
  std::string path(uint64_t id);

  // So many ids are remembered; past that the cache starts afresh (a host
  // that makes and removes a cgroup per job would otherwise grow it).
  static constexpr size_t kMaxRemembered = 4096;

 private:
  std::optional<std::string> root_;
  UniqueFd mount_;  // the hierarchy's root directory: where handles are opened
  std::unordered_map<uint64_t, std::string> paths_;
};

}  // namespace ebprof::record
