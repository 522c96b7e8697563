#include "record/stack_interner.h"

#include <algorithm>

namespace ebprof::record {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

uint64_t hash_stack(std::span<const uint64_t> kernel, std::span<const uint64_t> user) {
  // The lengths go in too, so a frame cannot move between the two halves.
  uint64_t h = mix(kernel.size(), user.size());
  for (uint64_t ip : kernel)
    h = mix(h, ip);
  for (uint64_t ip : user)
    h = mix(h, ip);
  return h;
}

bool equal(std::span<const uint64_t> a, const std::vector<uint64_t>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

void StackInterner::forget() {
  first_id_ = size();
  frames_ = 0;
  stacks_.clear();
  by_hash_.clear();
}

StackInterner::Result StackInterner::intern(std::span<const uint64_t> kernel,
                                            std::span<const uint64_t> user) {
  uint64_t h = hash_stack(kernel, user);
  auto [first, last] = by_hash_.equal_range(h);
  for (auto it = first; it != last; ++it) {
    const format::Stack& s = stacks_[it->second];
    if (equal(kernel, s.kernel) && equal(user, s.user))
      return {first_id_ + it->second, false};
  }
  if (stacks_.size() >= kMaxStacks || frames_ + kernel.size() + user.size() > kMaxFrames)
    forget();
  const uint32_t id = size();
  by_hash_.emplace(h, static_cast<uint32_t>(stacks_.size()));
  stacks_.push_back(format::Stack{{kernel.begin(), kernel.end()}, {user.begin(), user.end()}});
  frames_ += kernel.size() + user.size();
  return {id, true};
}

}  // namespace ebprof::record
