#include "record/in_root.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <deque>
#include <vector>

namespace ebprof::record {
namespace {

// Links followed in one resolution at most, as the kernel's own limit.
constexpr int kMaxLinks = 40;

std::deque<std::string> components(const std::string& path) {
  std::deque<std::string> out;
  for (size_t from = 0; from < path.size();) {
    size_t to = path.find('/', from);
    if (to == std::string::npos)
      to = path.size();
    if (to > from)
      out.push_back(path.substr(from, to - from));
    from = to + 1;
  }
  return out;
}

// The resolver for kernels without openat2: each component opened O_PATH
// with O_NOFOLLOW; a link read and its target spliced into what is left,
// an absolute one from the root again; ".." at the root stays there.
UniqueFd open_by_components(int root, const std::string& path, int flags) {
  std::deque<std::string> left = components(path);
  if (left.empty())
    return {};
  std::vector<UniqueFd> parents;  // the directories above `here`, outermost first
  UniqueFd here(fcntl(root, F_DUPFD_CLOEXEC, 0));
  for (int links = 0; here && !left.empty();) {
    const std::string name = std::move(left.front());
    left.pop_front();
    if (name == ".")
      continue;
    if (name == "..") {
      if (!parents.empty()) {
        here = std::move(parents.back());
        parents.pop_back();
      }
      continue;
    }
    UniqueFd next(openat(here.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!next || fstat(next.get(), &st) != 0)
      return {};
    if (S_ISLNK(st.st_mode)) {
      if ((left.empty() && (flags & O_NOFOLLOW)) || ++links > kMaxLinks)
        return {};
      std::vector<char> target(PATH_MAX);
      const ssize_t n = readlinkat(next.get(), "", target.data(), target.size());
      if (n <= 0 || static_cast<size_t>(n) >= target.size())
        return {};
      const std::string link(target.data(), static_cast<size_t>(n));
      if (link[0] == '/') {
        parents.clear();
        here = UniqueFd(fcntl(root, F_DUPFD_CLOEXEC, 0));
      }
      std::deque<std::string> spliced = components(link);
      left.insert(left.begin(), spliced.begin(), spliced.end());
      continue;
    }
    if (left.empty()) {
      // Opened again for real; O_NOFOLLOW: had it become a link since, no.
      return UniqueFd(openat(here.get(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
    }
    if (!S_ISDIR(st.st_mode))
      return {};
    parents.push_back(std::move(here));
    here = std::move(next);
  }
  return {};
}

}  // namespace

UniqueFd open_in_root(int root, const std::string& path, int flags, RootResolver resolver) {
  static std::atomic<bool> kernel_lacks_openat2 = false;
  if (resolver == RootResolver::kKernel && !kernel_lacks_openat2) {
    open_how how{};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
    // Magic links (/proc/self/...) inside a container's root would lead
    // out of it again.
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    const size_t start = path.find_first_not_of('/');
    const std::string relative = start == std::string::npos ? "." : path.substr(start);
    const long fd = syscall(SYS_openat2, root, relative.c_str(), &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS)
      return UniqueFd(static_cast<int>(fd));
    kernel_lacks_openat2 = true;
  }
  return open_by_components(root, path, flags);
}

UniqueFd open_in_process_root(uint32_t pid, const std::string& path, int flags) {
  const std::string root_path = "/proc/" + std::to_string(pid) + "/root";
  UniqueFd root(open(root_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root)
    return {};
  return open_in_root(root.get(), path, flags);
}

}  // namespace ebprof::record
