#include "record/stack_windows.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace ebprof::record {
namespace {

template <typename Key>
Key key_of(const void* data, size_t size) {
  const XXH128_hash_t h = XXH3_128bits(data, size);
  return {h.low64, h.high64};
}

}  // namespace

uint32_t StackWindows::block(const std::byte* bytes, format::SampleBatch& batch) {
  if (blocks_.size() >= kMaxRemembered)
    blocks_.clear();
  auto [it, inserted] = blocks_.try_emplace(key_of<Key>(bytes, kBlockBytes), next_block_);
  if (inserted) {
    batch.blocks.append(reinterpret_cast<const char*>(bytes), kBlockBytes);
    ++next_block_;
  }
  return it->second;
}

uint32_t StackWindows::intern(std::span<const uint64_t> regs, format::UserAbi abi, uint64_t base,
                              std::span<const std::byte> stack, format::SampleBatch& batch) {
  new_blocks_.clear();
  // The window's identity: registers, place, size, then its blocks' ids.
  identity_.assign(regs.begin(), regs.end());
  identity_.insert(identity_.end(), {base, stack.size(), static_cast<uint64_t>(abi)});
  const size_t first_id = identity_.size();
  // Blocks from the one holding `base` to the one holding the last byte,
  // each filled from the copy where it overlaps it, zero elsewhere.
  std::array<std::byte, kBlockBytes> bytes;
  for (uint64_t at = base / kBlockBytes * kBlockBytes; at < base + stack.size();
       at += kBlockBytes) {
    bytes.fill(std::byte{0});
    const uint64_t from = std::max(at, base), to = std::min(at + kBlockBytes, base + stack.size());
    std::memcpy(bytes.data() + (from - at), stack.data() + (from - base), to - from);
    const uint32_t known = next_block_;
    identity_.push_back(block(bytes.data(), batch));
    if (next_block_ != known)
      new_blocks_.push_back(at);
  }
  if (windows_.size() >= kMaxRemembered)
    windows_.clear();
  auto [it, inserted] = windows_.try_emplace(
      key_of<Key>(identity_.data(), identity_.size() * sizeof(uint64_t)), next_window_);
  if (inserted || next_window_ - it->second > kReach) {
    it->second = next_window_;
    batch.windows.push_back(
        {{regs.begin(), regs.end()},
         base,
         static_cast<uint32_t>(stack.size()),
         abi,
         {identity_.begin() + static_cast<ptrdiff_t>(first_id), identity_.end()}});
    ++next_window_;
  }
  return it->second;
}

}  // namespace ebprof::record
