#include "record/stack_windows.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

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
  format::UserWindow w{{regs.begin(), regs.end()}, base, static_cast<uint32_t>(stack.size()), abi};
  // Blocks from the one holding `base` to the one holding the last byte,
  // each filled from the copy where it overlaps it, zero elsewhere.
  const uint64_t first = base / kBlockBytes * kBlockBytes;
  std::array<std::byte, kBlockBytes> bytes;
  for (uint64_t at = first; at < base + stack.size(); at += kBlockBytes) {
    bytes.fill(std::byte{0});
    const uint64_t from = std::max(at, base), to = std::min(at + kBlockBytes, base + stack.size());
    std::memcpy(bytes.data() + (from - at), stack.data() + (from - base), to - from);
    const uint32_t known = next_block_;
    w.blocks.push_back(block(bytes.data(), batch));
    if (next_block_ != known)
      new_blocks_.push_back(at);
  }
  // The window's identity: registers, place, size and the blocks' ids.
  std::vector<uint64_t> identity(w.regs);
  identity.insert(identity.end(), {base, w.size, static_cast<uint64_t>(abi)});
  identity.insert(identity.end(), w.blocks.begin(), w.blocks.end());
  if (windows_.size() >= kMaxRemembered)
    windows_.clear();
  auto [it, inserted] = windows_.try_emplace(
      key_of<Key>(identity.data(), identity.size() * sizeof(uint64_t)), next_window_);
  if (inserted) {
    batch.windows.push_back(std::move(w));
    ++next_window_;
  }
  return it->second;
}

}  // namespace ebprof::record
