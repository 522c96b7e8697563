#include "record/process_tracker.h"

#include <algorithm>

#include "format/lookup.h"

namespace ebprof::record {

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
    known.recheck = std::any_of(user.begin(), user.end(), [&](uint64_t ip) {
      return !format::find_mapping(known.mappings, ip);
    });
  // A needed re-read that is rate-limited now happens on a later sample of
  // the process, stack new or not.
  if (!known.recheck || now_ns < known.read_at_ns + kRereadIntervalNs)
    return std::nullopt;
  return capture(pid, known, now_ns);
}

const format::Mapping* ProcessTracker::find_mapping(uint32_t pid, uint64_t ip) const {
  auto it = known_.find(pid);
  return it == known_.end() ? nullptr : format::find_mapping(it->second.mappings, ip);
}

}  // namespace ebprof::record
