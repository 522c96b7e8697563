#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace ebprof::record {

// The `-- command args` workload. start() returns once the child runs the
// command's own image, so its pid can be added to the BPF filter without
// sampling the recorder's pre-exec copy of itself.
class ChildProcess {
 public:
  // Throws Error when the command cannot be run (not found, not executable).
  static ChildProcess start(const std::vector<std::string>& argv);

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
  pid_t pid_ = -1;  // -1 once reaped
};

}  // namespace ebprof::record
