#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "format/contents.h"

namespace ebprof::record {

// Gives each distinct (kernel, user, Python) stack a dense id, starting at 0. Lookup
// hashes the frames in place and compares them in full, so a hash collision
// costs a compare, never a lost or merged stack, and a known stack costs no
// allocation.
//
// Memory is bounded: past kMaxStacks stacks or kMaxFrames frames remembered
// (at most ~100 MB, ~70 MB at a typical 265 bytes a stack), what is
// remembered starts afresh and ids go on, at the cost of writing a stack
// seen again once more. A week-long recording of ever new stacks then
// stays within that bound.
class StackInterner {
 public:
  struct Result {
    uint32_t id;
    bool is_new;
  };
  Result intern(std::span<const uint64_t> kernel, std::span<const uint64_t> user,
                std::span<const uint64_t> python = {},
                format::PythonEnd python_end = format::PythonEnd::kNone);

  // A stack intern() just gave out (one of those remembered).
  const format::Stack& stack(uint32_t id) const { return stacks_[id - first_id_]; }
  // Ids given out so far.
  uint32_t size() const { return first_id_ + static_cast<uint32_t>(stacks_.size()); }
  // Stacks remembered now.
  size_t remembered() const { return stacks_.size(); }

  // Forgets every stack, ids going on: the next batch defines again the
  // stacks it uses, so that it needs no earlier batch to be read.
  void forget();
  // Forgets every stack and numbers from 0 again: a new file (--switch-output).
  void restart() {
    forget();
    first_id_ = 0;
  }

  static constexpr size_t kMaxStacks = size_t{1} << 18;
  static constexpr size_t kMaxFrames = size_t{1} << 23;

 private:
  uint32_t first_id_ = 0;  // the id of stacks_[0]
  size_t frames_ = 0;      // in stacks_
  std::vector<format::Stack> stacks_;
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;  // into stacks_
};

}  // namespace ebprof::record
