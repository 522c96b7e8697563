#include "record/process_tracker.h"

#include <algorithm>

namespace ebprof::record {
namespace {

// `mappings` is sorted by start and does not overlap.
const format::Mapping* find_in(const std::vector<format::Mapping>& mappings, uint64_t ip) {
  auto it = std::upper_bound(mappings.begin(), mappings.end(), ip,
                             [](uint64_t a, const format::Mapping& m) { return a < m.start; });
  return it != mappings.begin() && ip < std::prev(it)->end ? &*std::prev(it) : nullptr;
}

}  // namespace

std::optional<format::ProcessInfo> ProcessTracker::capture(uint32_t pid, Known& known,
                                                           uint64_t now_ns) {
  format::ProcessInfo info = reader_(pid, now_ns);
  known.read_at_ns = now_ns;
  known.recheck = false;
  // A re-read that finds nothing (the process is exiting, or gone) adds no
  // information and must not shadow the capture that had its mappings.
  if (info.mappings.empty() && !known.mappings.empty())
    return std::nullopt;
  std::sort(info.mappings.begin(), info.mappings.end(),
            [](const auto& a, const auto& b) { return a.start < b.start; });
  // Nothing changed (the unresolved address is junk from a broken frame
  // chain, say): writing the same capture again would only cost space.
  if (!known.mappings.empty() && info.mappings == known.mappings)
    return std::nullopt;
  known.mappings = info.mappings;
  return info;
}

std::optional<format::ProcessInfo> ProcessTracker::observe(uint32_t pid,
                                                           std::span<const uint64_t> user,
                                                           bool new_stack, uint64_t now_ns) {
  if (pid == 0)
    return std::nullopt;  // the idle task has no process to read
  auto [it, inserted] = known_.try_emplace(pid);
  Known& known = it->second;
  if (inserted)
    return capture(pid, known, now_ns);
  if (new_stack && !known.recheck)
    known.recheck = std::any_of(user.begin(), user.end(),
                                [&](uint64_t ip) { return !find_in(known.mappings, ip); });
  // A needed re-read that is rate-limited now happens on a later sample of
  // the process, stack new or not.
  if (!known.recheck || now_ns < known.read_at_ns + kRereadIntervalNs)
    return std::nullopt;
  return capture(pid, known, now_ns);
}

const format::Mapping* ProcessTracker::find_mapping(uint32_t pid, uint64_t ip) const {
  auto it = known_.find(pid);
  return it == known_.end() ? nullptr : find_in(it->second.mappings, ip);
}

}  // namespace ebprof::record
