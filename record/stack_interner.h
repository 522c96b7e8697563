#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "format/recording.h"

namespace ebprof::record {

// Gives each distinct (kernel, user) stack a dense id, starting at 0. Lookup
// hashes the frames in place and compares them in full, so a hash collision
// costs a compare, never a lost or merged stack, and a known stack costs no
// allocation.
class StackInterner {
 public:
  struct Result {
    uint32_t id;
    bool is_new;
  };
  Result intern(std::span<const uint64_t> kernel, std::span<const uint64_t> user);

  const format::Stack& stack(uint32_t id) const { return stacks_[id]; }
  uint32_t size() const { return static_cast<uint32_t>(stacks_.size()); }

 private:
  std::vector<format::Stack> stacks_;
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;
};

}  // namespace ebprof::record
