#pragma once

#include <stdexcept>
#include <string>

namespace ebprof {

// The one error type of the codebase. Its message is a single line meant for
// the user: what went wrong and, where there is one, what to do about it.
// Layers throw it; only main() catches it and prints it.
class Error : public std::runtime_error {
 public:
  // `code` is the errno of a failed system call, for callers that can
  // recover from one cause (retry without a feature the kernel lacks).
  explicit Error(const std::string& message, int code = 0)
      : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// "<what>: <strerror(err)>", for wrapping a failed system call.
std::string errno_message(const std::string& what, int err);

[[noreturn]] void throw_errno(const std::string& what, int err);

}  // namespace ebprof
