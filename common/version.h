#pragma once

// What --version prints: the release, and the commit it was built from.

#include <string>

namespace ebprof {

inline std::string version_line(const std::string& program) {
  return program + " " + EBPROF_VERSION + " (commit " + EBPROF_COMMIT + ")";
}

}  // namespace ebprof
