#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace ebprof::record {

// The processes of -p, which takes process or thread ids like perf (a
// thread id selects its process): BPF filters on processes. Throws Error
// naming an id that does not exist.
std::vector<uint32_t> resolve_pids(const std::vector<uint32_t>& ids);

// Watches the -p processes for the recording to end when they all have:
// by pidfd, which stays with the process it was opened for (a reused pid
// is another process) and is readable once it exits, zombie or reaped
// alike. Kernels before 5.3 have no pidfd_open: kill(pid, 0) then.
class ProcessWatch {
 public:
  explicit ProcessWatch(const std::vector<uint32_t>& pids);
  // Whether every watched process has exited; false when none is watched.
  bool all_exited() const;

 private:
  std::vector<uint32_t> pids_;
  std::vector<UniqueFd> pidfds_;  // by pids_; empty where pidfd_open failed
};

// The threads process `pid` has now; none when it is gone.
std::vector<uint32_t> threads_of(uint32_t pid);

// The threads of -t, each checked to exist now.
std::vector<uint32_t> check_tids(const std::vector<uint32_t>& tids);

// The cgroup v2 directory of --cgroup (absolute, or relative to where the
// v2 hierarchy is mounted, like perf's -G), opened for the BPF cgroup
// filter; an empty fd for an empty path.
UniqueFd open_cgroup(const std::string& path);

// The processes that can be sampled and already exist, to seed the process
// tracker with: every process when `system_wide`, else the -p processes and
// the processes of the -t threads (a command about to start needs none).
std::vector<uint32_t> existing_targets(bool system_wide, const std::vector<uint32_t>& pids,
                                       const std::vector<uint32_t>& tids);

}  // namespace ebprof::record
