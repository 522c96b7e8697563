#include "report/model/profile.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace ebprof::report {

size_t FrameTable::Hash::operator()(const Frame& f) const {
  size_t h = std::hash<std::string>{}(f.name);
  for (uint64_t v : {uint64_t(f.kind), uint64_t(f.reason), uint64_t(f.state), f.address, f.offset,
                     f.file_offset, uint64_t(f.line), std::hash<std::string>{}(f.module),
                     std::hash<std::string>{}(f.path), std::hash<std::string>{}(f.file)})
    h = hash_combine(h, v);
  return h;
}

uint32_t FrameTable::intern(Frame frame) {
  auto it = index_.find(frame);
  if (it != index_.end())
    return it->second;
  const auto id = static_cast<uint32_t>(frames_.size());
  frames_.push_back(frame);
  index_.emplace(std::move(frame), id);
  return id;
}

std::span<const uint32_t> FrameTable::keep(std::vector<uint32_t> ids) {
  // Back to back in chunks that never grow past what they reserved, so
  // spans stay valid: one allocation per 64K ids, not one per stack.
  constexpr size_t kChunk = size_t{1} << 16;
  if (lists_.empty() || lists_.back().capacity() - lists_.back().size() < ids.size())
    lists_.emplace_back().reserve(std::max(kChunk, ids.size()));
  std::vector<uint32_t>& chunk = lists_.back();
  const size_t at = chunk.size();
  chunk.insert(chunk.end(), ids.begin(), ids.end());
  return std::span(chunk).subspan(at, ids.size());
}

std::vector<std::pair<UnnamedReason, uint64_t>> unnamed_by_reason(
    std::span<const ProfileStack> stacks) {
  std::map<UnnamedReason, uint64_t> samples;
  for (const ProfileStack& s : stacks) {
    std::set<UnnamedReason> reasons;
    for (const Frame& f : s.frames)
      if (!f.named())
        reasons.insert(f.reason);
    for (UnnamedReason r : reasons)
      samples[r] += s.values.count;
  }
  std::vector<std::pair<UnnamedReason, uint64_t>> out(samples.begin(), samples.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace ebprof::report
