#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "format/contents.h"

namespace ebprof::record {

// Stores the user stack windows of --call-graph dwarf compactly, before any
// compression: a window's bytes are cut into blocks aligned to absolute
// addresses, so the blocks of outer frames, which do not change from one
// sample of a thread to the next, are the same blocks and are stored once;
// a window whose registers and bytes repeat is stored once too (and
// unwound once). Content is identified by a 128-bit hash.
//
// Memory is bounded: past kMaxRemembered blocks or windows, what is
// remembered starts afresh (ids go on), at the cost of storing some
// content again. A window repeated after kReach others is defined again
// (its blocks are not): a report then keeps only the last kReach windows.
class StackWindows {
 public:
  static constexpr uint32_t kBlockBytes = 128;
  static constexpr size_t kMaxRemembered = size_t{1} << 20;
  static constexpr uint32_t kReach = 8192;  // RecordingInfo::window_reach

  // The window of these registers and stack bytes (from `base` up): its
  // id, with what is new appended to `batch` (blocks, then the window).
  // `new_blocks` receives the addresses of the blocks this call stored.
  uint32_t intern(std::span<const uint64_t> regs, format::UserAbi abi, uint64_t base,
                  std::span<const std::byte> stack, format::SampleBatch& batch);

  // Later windows and blocks are defined again, under new ids, as the
  // stacks of a new batch are: a lost batch then costs its own samples.
  void forget() {
    blocks_.clear();
    windows_.clear();
  }
  // Forgets them and numbers from 0 again: a new file (--switch-output).
  void restart() {
    forget();
    next_block_ = next_window_ = 0;
  }

  uint32_t windows() const { return next_window_; }  // ids handed out so far
  uint32_t blocks() const { return next_block_; }
  uint64_t distinct_bytes() const { return uint64_t{next_block_} * kBlockBytes; }

  // The address range of the blocks the last intern() stored: what is new
  // in it (so a caller looks at each block's words once).
  std::span<const uint64_t> new_block_addresses() const { return new_blocks_; }

 private:
  struct Key {
    uint64_t low, high;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return k.low ^ (k.high * 0x9e3779b97f4a7c15ull); }
  };
  uint32_t block(const std::byte* bytes, format::SampleBatch& batch);

  std::unordered_map<Key, uint32_t, KeyHash> blocks_;
  std::unordered_map<Key, uint32_t, KeyHash> windows_;
  std::vector<uint64_t> new_blocks_;
  std::vector<uint64_t> identity_;  // scratch: the window being interned
  uint32_t next_block_ = 0;
  uint32_t next_window_ = 0;
};

}  // namespace ebprof::record
