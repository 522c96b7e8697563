#include "record/targets.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <optional>

#include "common/error.h"
#include "record/cgroup_paths.h"
#include "record/proc_file.h"
#include "record/proc_maps.h"

namespace ebprof::record {

std::vector<uint32_t> resolve_pids(const std::vector<uint32_t>& ids) {
  std::vector<uint32_t> tgids;
  for (uint32_t id : ids) {
    std::optional<uint32_t> tgid = id == 0 ? std::nullopt : read_tgid(id);
    if (!tgid)
      throw Error("no process with pid " + std::to_string(id) + " (-p): check the pid with ps");
    if (std::find(tgids.begin(), tgids.end(), *tgid) == tgids.end())
      tgids.push_back(*tgid);
  }
  return tgids;
}

ProcessWatch::ProcessWatch(const std::vector<uint32_t>& pids) : pids_(pids) {
  for (uint32_t pid : pids_)
    pidfds_.emplace_back(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
}

bool ProcessWatch::all_exited() const {
  if (pids_.empty())
    return false;
  for (size_t i = 0; i < pids_.size(); ++i) {
    if (pidfds_[i]) {
      pollfd p{.fd = pidfds_[i].get(), .events = POLLIN, .revents = 0};
      if (poll(&p, 1, 0) == 0)
        return false;
    } else if (kill(static_cast<pid_t>(pids_[i]), 0) == 0 || errno == EPERM) {
      return false;
    }
  }
  return true;
}

namespace {

// The ids that name entries of `dir` (/proc, /proc/PID/task); none when
// it is gone.
std::vector<uint32_t> numbered_entries(const std::string& dir) {
  std::vector<uint32_t> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    uint32_t id = 0;
    auto [end, bad] = std::from_chars(name.data(), name.data() + name.size(), id);
    if (bad == std::errc() && end == name.data() + name.size())
      ids.push_back(id);
  }
  return ids;
}

}  // namespace

std::vector<uint32_t> threads_of(uint32_t pid) {
  return numbered_entries("/proc/" + std::to_string(pid) + "/task");
}

std::vector<uint32_t> check_tids(const std::vector<uint32_t>& tids) {
  for (uint32_t tid : tids)
    if (tid == 0 || !read_tgid(tid))
      throw Error("no thread with id " + std::to_string(tid) + " (-t): check it with ps -eLf");
  return tids;
}

UniqueFd open_cgroup(const std::string& path) {
  if (path.empty())
    return {};
  const std::string root = cgroup2_mount().value_or("/sys/fs/cgroup");
  const std::string dir = path.starts_with("/") ? path : root + "/" + path;
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    throw Error(errno_message("cannot open cgroup " + path, errno) +
                ": give a directory of the cgroup v2 hierarchy (mounted at " + root + ")");
  return UniqueFd(fd);
}

std::vector<uint32_t> existing_targets(bool system_wide, const std::vector<uint32_t>& pids,
                                       const std::vector<uint32_t>& tids) {
  std::vector<uint32_t> out = pids;
  for (uint32_t tid : tids)
    if (std::optional<uint32_t> tgid = read_tgid(tid))
      out.push_back(*tgid);
  if (system_wide)
    for (uint32_t pid : numbered_entries("/proc"))
      out.push_back(pid);
  return out;
}

}  // namespace ebprof::record
