#include "common/error.h"

#include <cstring>

namespace ebprof {

std::string errno_message(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

void throw_errno(const std::string& what, int err) {
  throw Error(errno_message(what, err), err);
}

}  // namespace ebprof
