#include "report/load/overlap.h"

#include <algorithm>

#include "common/text.h"
#include "report/model/sample_key.h"

namespace ebprof::report {

namespace {

// Recordings since 1.10 name their boot. Before, CLOCK_MONOTONIC counts
// from boot: a recording's boot is when its clock read 0, in wall-clock
// time. NTP slews the two clocks apart by less than a second over days.
constexpr uint64_t kSameBootNs = 2'000'000'000;

bool same_boot(const format::RecordingInfo& a, const format::RecordingInfo& b) {
  if (!a.boot_id.empty() && !b.boot_id.empty())
    return a.hostname == b.hostname && a.boot_id == b.boot_id;
  // Unsigned, wrapping: a hostile header's clocks must not overflow.
  const uint64_t boot_a = a.start_realtime_ns - a.start_monotonic_ns;
  const uint64_t boot_b = b.start_realtime_ns - b.start_monotonic_ns;
  return a.hostname == b.hostname && a.kernel_build_id == b.kernel_build_id &&
         std::min(boot_a - boot_b, boot_b - boot_a) < kSameBootNs;
}

// The monotonic times a recording's samples can have.
std::pair<uint64_t, uint64_t> covered(const Recording& r) {
  return {r.info.start_monotonic_ns,
          std::max(r.last_sample_ns, r.end ? r.end->end_monotonic_ns : 0)};
}

}  // namespace

size_t Overlaps::KeyHash::operator()(const Key& k) const {
  return hash_combine(hash_combine(std::hash<uint64_t>{}(k.time_ns), k.tid),
                      hash_combine(k.cpu, k.boot));
}

Overlaps Overlaps::find(std::span<const Recording> recordings) {
  Overlaps o;
  std::vector<size_t> firsts;  // the first recording of each boot
  for (const Recording& r : recordings) {
    auto same = std::find_if(firsts.begin(), firsts.end(), [&](size_t first) {
      return same_boot(recordings[first].info, r.info);
    });
    o.boot_of_.push_back(same - firsts.begin());
    if (same == firsts.end())
      firsts.push_back(o.boot_of_.size() - 1);
  }
  uint64_t shared_ns = 0;
  o.shared_ns_.resize(recordings.size());
  for (size_t i = 0; i < recordings.size(); ++i)
    for (size_t j = i + 1; j < recordings.size(); ++j) {
      if (o.boot_of_[i] != o.boot_of_[j])
        continue;
      const auto [a0, a1] = covered(recordings[i]);
      const auto [b0, b1] = covered(recordings[j]);
      const uint64_t start = std::max(a0, b0), end = std::min(a1, b1);
      if (start >= end)
        continue;
      o.spans_.push_back({o.boot_of_[i], start, end});
      shared_ns += end - start;
      o.shared_ns_[j] += end - start;
      if (o.description_.empty())
        o.description_ = recording_name(recordings[i]) + " and " + recording_name(recordings[j]);
    }
  if (!o.spans_.empty())
    o.description_ = "recordings of one host overlap (" + o.description_ +
                     (o.spans_.size() > 1 ? " among others" : "") +
                     string_printf(", %.2f s): samples they share counted once", shared_ns / 1e9);
  return o;
}

bool Overlaps::seen_before(size_t at, const format::Sample& s) {
  if (at >= boot_of_.size())
    return false;
  const size_t boot = boot_of_[at];
  const bool shared = std::any_of(spans_.begin(), spans_.end(), [&](const Span& span) {
    return span.boot == boot && s.time_ns >= span.start_ns && s.time_ns <= span.end_ns;
  });
  return shared && !seen_.insert({boot, s.time_ns, s.tid, s.cpu}).second;
}

}  // namespace ebprof::report
