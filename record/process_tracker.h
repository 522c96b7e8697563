#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "format/recording.h"

namespace ebprof::record {

// Decides when a process's maps must be (re)captured: the first time it is
// sampled, and again when a newly seen stack holds a user address outside
// every mapping captured so far (libraries loaded after the first read,
// dlopen, exec). Re-reads of one process are at least kRereadIntervalNs
// apart, so a process full of JIT code or an address that never resolves
// cannot turn every sample into a /proc read; a re-read that finds no
// mappings (the process is exiting) is not reported.
class ProcessTracker {
 public:
  using Reader = std::function<format::ProcessInfo(uint32_t pid, uint64_t now_ns)>;
  static constexpr uint64_t kRereadIntervalNs = 100'000'000;

  explicit ProcessTracker(Reader reader) : reader_(std::move(reader)) {}

  // Returns what to write to the recording, if anything. Only stacks seen for
  // the first time (`new_stack`) are checked against the mappings: the
  // common case, a known stack, costs one hash lookup.
  std::optional<format::ProcessInfo> observe(uint32_t pid, std::span<const uint64_t> user,
                                             bool new_stack, uint64_t now_ns);

  size_t process_count() const { return known_.size(); }
  // The mapping of `pid`'s latest capture that holds `ip`, if any.
  const format::Mapping* find_mapping(uint32_t pid, uint64_t ip) const;

 private:
  struct Known {
    std::vector<format::Mapping> mappings;
    uint64_t read_at_ns = 0;
    bool recheck = false;  // a stack had an address outside `mappings`
  };
  std::optional<format::ProcessInfo> capture(uint32_t pid, Known& known, uint64_t now_ns);

  Reader reader_;
  std::unordered_map<uint32_t, Known> known_;
};

}  // namespace ebprof::record
