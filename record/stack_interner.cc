#include "record/stack_interner.h"

#include <algorithm>

namespace ebprof::record {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

uint64_t hash_stack(std::span<const uint64_t> kernel, std::span<const uint64_t> user,
                    std::span<const uint64_t> python, format::PythonEnd end) {
  // The lengths go in too, so a frame cannot move between the lists.
  uint64_t h = mix(mix(kernel.size(), user.size()), python.size() << 8 | static_cast<uint8_t>(end));
  for (uint64_t ip : kernel)
    h = mix(h, ip);
  for (uint64_t ip : user)
    h = mix(h, ip);
  for (uint64_t word : python)
    h = mix(h, word);
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
                                            std::span<const uint64_t> user,
                                            std::span<const uint64_t> python,
                                            format::PythonEnd python_end) {
  uint64_t h = hash_stack(kernel, user, python, python_end);
  auto [first, last] = by_hash_.equal_range(h);
  for (auto it = first; it != last; ++it) {
    const format::Stack& s = stacks_[it->second];
    if (equal(kernel, s.kernel) && equal(user, s.user) && equal(python, s.python) &&
        python_end == s.python_end)
      return {first_id_ + it->second, false};
  }
  const size_t frames = kernel.size() + user.size() + python.size();
  if (stacks_.size() >= kMaxStacks || frames_ + frames > kMaxFrames)
    forget();
  const uint32_t id = size();
  by_hash_.emplace(h, static_cast<uint32_t>(stacks_.size()));
  stacks_.push_back(format::Stack{{kernel.begin(), kernel.end()},
                                  {user.begin(), user.end()},
                                  {python.begin(), python.end()},
                                  python_end});
  frames_ += frames;
  return {id, true};
}

}  // namespace ebprof::record
