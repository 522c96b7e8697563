#include "record/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "common/error.h"
#include "common/unique_fd.h"

namespace ebprof::record {

ChildProcess ChildProcess::start(const std::vector<std::string>& argv) {
  if (argv.empty())
    throw Error("no command to run");
  // The child reports an exec failure as an errno on this pipe; a successful
  // exec closes it (O_CLOEXEC) and the parent reads end-of-file.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw_errno("pipe", errno);
  UniqueFd read_end(fds[0]), write_end(fds[1]);

  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0)
    throw_errno("fork", errno);
  if (pid == 0) {
    execvp(args[0], args.data());
    int err = errno;
    (void)!write(write_end.get(), &err, sizeof err);
    _exit(127);
  }
  write_end.reset();
  int err = 0;
  ssize_t n;
  do {
    n = read(read_end.get(), &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  if (n == sizeof err) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw Error(errno_message("cannot run '" + argv[0] + "'", err));
  }
  return ChildProcess(pid);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0)
    terminate();
}

std::optional<int> ChildProcess::try_wait() {
  if (pid_ <= 0)
    return std::nullopt;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_)
    return std::nullopt;
  pid_ = -1;
  return status;
}

void ChildProcess::terminate() {
  if (pid_ <= 0)
    return;
  // Like perf, the workload gets SIGTERM when recording stops first; one that
  // ignores it gets SIGKILL after a grace period, so stopping never hangs.
  kill(pid_, SIGTERM);
  for (int i = 0; i < 200 && try_wait() == std::nullopt; ++i)
    usleep(10'000);
  if (pid_ <= 0)
    return;
  kill(pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

}  // namespace ebprof::record
