#include "record/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "common/error.h"
#include "common/unique_fd.h"

namespace ebprof::record {

namespace {

bool is_executable(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

void check_runnable(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty())
    throw Error("no command to run");
  const std::string& name = argv[0];
  if (name.find('/') != std::string::npos) {
    if (is_executable(name))
      return;
    // As execvp says: a directory, or a file without execute permission,
    // cannot be run (EACCES); else why the path does not resolve.
    const int err = access(name.c_str(), X_OK) == 0 ? EACCES : errno;
    throw Error(errno_message("cannot run '" + name + "'", err) +
                ": check the path of the command");
  }
  // execvp's search: PATH, or its default when unset.
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/bin:/usr/bin";
  for (size_t from = 0; from <= dirs.size();) {
    size_t to = dirs.find(':', from);
    if (to == std::string::npos)
      to = dirs.size();
    const std::string dir = to > from ? dirs.substr(from, to - from) : ".";
    if (is_executable(dir + "/" + name))
      return;
    from = to + 1;
  }
  throw Error("cannot run '" + name + "': no such command in PATH; check its spelling");
}

ChildProcess ChildProcess::start(const std::vector<std::string>& argv) {
  if (argv.empty())
    throw Error("no command to run");
  // The child waits for a byte on `go` before it execs; it reports an exec
  // failure as an errno on `result`, and a successful exec closes that
  // (O_CLOEXEC), so the parent reads end-of-file.
  int go[2], result[2];
  if (pipe2(go, O_CLOEXEC) != 0)
    throw_errno("pipe", errno);
  UniqueFd go_read(go[0]), go_write(go[1]);
  if (pipe2(result, O_CLOEXEC) != 0)
    throw_errno("pipe", errno);
  UniqueFd result_read(result[0]), result_write(result[1]);

  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0)
    throw_errno("fork", errno);
  if (pid == 0) {
    char byte;
    // No go (the recorder failed before run()): leave without running it.
    if (read(go_read.get(), &byte, 1) != 1)
      _exit(127);
    execvp(args[0], args.data());
    int err = errno;
    (void)!write(result_write.get(), &err, sizeof err);
    _exit(127);
  }
  ChildProcess child(pid);
  child.go_ = std::move(go_write);
  child.result_ = std::move(result_read);
  child.command_ = argv[0];
  return child;
}

void ChildProcess::run() {
  const char byte = 1;
  if (write(go_.get(), &byte, 1) != 1)
    throw_errno("starting '" + command_ + "'", errno);
  go_.reset();
  int err = 0;
  ssize_t n;
  do {
    n = read(result_.get(), &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  result_.reset();
  if (n == sizeof err) {
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    // execve's ENOENT for a file that exists: what it names to run it.
    if (err == ENOENT)
      throw Error("cannot run '" + command_ +
                  "': the interpreter it names (its #! line, or its ELF loader) is missing");
    throw Error(errno_message("cannot run '" + command_ + "'", err));
  }
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      go_(std::move(other.go_)),
      result_(std::move(other.result_)),
      command_(std::move(other.command_)) {}

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
