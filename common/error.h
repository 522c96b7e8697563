#pragma once

#include <stdexcept>
#include <string>

namespace ebprof {

// The one error type of the codebase. Its message is a single line meant for
// the user: what went wrong and, where there is one, what to do about it.
// Layers throw it; only main() catches it and prints it.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "<what>: <strerror(err)>", for wrapping a failed system call.
std::string errno_message(const std::string& what, int err);

[[noreturn]] void throw_errno(const std::string& what, int err);

}  // namespace ebprof
