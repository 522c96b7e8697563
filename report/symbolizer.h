#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/frame.h"
#include "report/kernel_symbolizer.h"
#include "report/profile.h"
#include "report/user_symbolizer.h"

namespace ebprof::report {

// A distinct (process, comm, stack) of the profile with names for its frames.
struct SymbolizedStack {
  uint32_t pid = 0;
  std::string comm;
  uint64_t count = 0;
  std::vector<Frame> frames;  // leaf first: kernel frames, then user frames
};

// Symbolizes every distinct stack of `profile` once. Output writers take the
// result; none of them symbolizes on its own.
std::vector<SymbolizedStack> symbolize(const Profile& profile);

}  // namespace ebprof::report
