#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace ebprof::record {

// The `-- command args` workload, in two steps, like perf's: start() forks
// a child that waits before it execs, so its pid can be added to the BPF
// filter before the command runs a single instruction (a command that
// starts threads at once would otherwise lose its first milliseconds);
// run() lets it exec.
// Throws Error, as execvp would fail, when `argv` cannot be run: not found
// in PATH, not an executable file.
void check_runnable(const std::vector<std::string>& argv);

class ChildProcess {
 public:
  static ChildProcess start(const std::vector<std::string>& argv);
  // Throws Error when the command cannot be run (not found, not executable).
  void run();

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ~ChildProcess();  // terminates a child that is still running

  pid_t pid() const { return pid_; }
  // Reaps the child if it has exited; returns its wait status then.
  std::optional<int> try_wait();
  // Sends SIGTERM and reaps it.
  void terminate();

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;   // -1 once reaped
  UniqueFd go_;      // the child execs once a byte arrives here
  UniqueFd result_;  // an errno from a failed exec, or end-of-file
  std::string command_;
};

}  // namespace ebprof::record
