#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "report/frame.h"
#include "report/kernel_symbolizer.h"
#include "report/profile.h"
#include "report/user_symbolizer.h"

namespace ebprof::report {

// A distinct (process, thread, CPU, comm, stack) of the profile with names
// for its frames.
struct SymbolizedStack {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint16_t cpu = 0;
  std::string comm;
  uint64_t count = 0;        // samples (or intervals off CPU); --weight time makes it microseconds
  Frames frames;             // kernel frames, then user frames; off CPU, then "[off-cpu: STATE]"
  uint64_t time_ns = 0;      // what the samples stand for: periods, or time off CPU
  uint8_t off_cpu = kOnCpu;  // as StackCount::off_cpu
};

// Names the stacks of one profile: each distinct (process, maps capture,
// stack) once, each frame through the symbolizers' own caches.
class Symbolizer {
 public:
  explicit Symbolizer(const Profile& profile, SymbolizeOptions options = {});
  // Sharing `user`, and its caches, with the other sources of a report.
  Symbolizer(const Profile& profile, UserSymbolizer& user);
  // The frames of stack `stack_id` of `pid` under its maps capture `capture`.
  const Frames& frames(uint32_t pid, uint32_t capture, uint32_t stack_id);

 private:
  std::vector<Frame> resolve(uint32_t pid, uint32_t capture, uint32_t stack_id);

  struct Key {
    uint32_t pid, capture, stack_id;
    auto operator<=>(const Key&) const = default;
  };
  const Profile& profile_;
  KernelSymbolizer kernel_;
  std::unique_ptr<UserSymbolizer> owned_;
  UserSymbolizer* user_;
  std::map<Key, Frames> cache_;
};

// Symbolizes every distinct stack of `profile`. Output writers take the
// result; none of them symbolizes on its own. Without `per_thread`, stacks
// of one process are merged across threads and CPUs (their tid and cpu are
// 0): what folded output and a top table without those keys need.
std::vector<SymbolizedStack> symbolize(const Profile& profile, SymbolizeOptions options = {},
                                       bool per_thread = true);
// The stacks of several profiles (the sources of a report), each named
// with its own maps and kallsyms, in one list; binaries and debuginfo are
// opened once for all of them.
std::vector<SymbolizedStack> symbolize(std::span<const Profile> profiles, SymbolizeOptions options,
                                       bool per_thread);

// Samples per reason their stacks have unnamed frames for ("binary not
// found": 12), each sample counted once per reason, most first.
std::vector<std::pair<std::string, uint64_t>> unnamed_by_reason(
    const std::vector<SymbolizedStack>& stacks);

// "none", or "binary not found in 12 samples (0.4%), ..." out of `total`.
std::string describe_unnamed(const std::vector<std::pair<std::string, uint64_t>>& unnamed,
                             uint64_t total, const char* unit = "samples");

}  // namespace ebprof::report
