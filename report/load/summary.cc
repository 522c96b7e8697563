#include "report/load/summary.h"

#include <algorithm>

#include <map>
#include <set>

#include "format/losses.h"

namespace ebprof::report {

RecordingSummary summarize(std::span<const Recording> recordings) {
  RecordingSummary s;
  const format::RecordingInfo& first = recordings.front().info;
  s.writer_version = first.writer_version;
  s.kernel_release = first.kernel_release;
  s.machine = first.machine;
  s.event = first.event;
  s.sample_frequency = first.sample_frequency;
  s.sample_period = first.sample_period;
  s.sample_weight = sample_weight(first);
  s.clock_event = is_clock_event(first.event);
  s.sample_periods = std::any_of(recordings.begin(), recordings.end(),
                                 [](const Recording& r) { return r.sample_periods; });
  s.sampling = first.sampling;
  s.off_cpu = first.off_cpu;
  s.cpu_count = first.cpu_count;
  s.start_realtime_ns = first.start_realtime_ns;
  std::vector<format::LossCount> losses;
  uint64_t duration_ns = 0;
  std::set<std::string> hosts, paths;
  std::map<std::string, std::set<std::pair<uint32_t, uint32_t>>> python_not_read;
  // Each distinct name once, in order of appearance.
  auto add = [](std::set<std::string>& seen, std::string& list, const std::string& name) {
    if (seen.insert(name).second)
      list += (list.empty() ? "" : ", ") + name;
  };
  for (const Recording& r : recordings) {
    add(hosts, s.hostname, r.info.hostname);
    add(paths, s.path, r.path);
    s.samples += r.total_samples;
    s.recorded_samples += r.recorded_samples;
    s.idle_samples += r.idle_samples;
    s.unviewed_samples += r.unviewed_samples;
    s.unviewed_intervals += r.unviewed_intervals;
    // Added up in whole nanoseconds, as each recording's own duration is;
    // times recordings share counted once.
    const double own_s = std::max(0.0, duration_s(r) - r.shared_ns / 1e9);
    duration_ns += static_cast<uint64_t>(own_s * 1e9);
    s.cpu_seconds += own_s * std::max<uint32_t>(r.info.cpu_count, 1);
    s.duplicate_samples += r.duplicate_samples;
    if (s.overlap.empty())
      s.overlap = r.overlap;
    std::vector<format::LossCount> l = loss_totals(r);
    losses.insert(losses.end(), l.begin(), l.end());
    s.ended &= r.end.has_value();
    if (!r.warning.empty())
      s.warning += (s.warning.empty() ? "" : "; ") + r.warning;
    for (const auto& [pid, captures] : r.processes)
      for (const format::ProcessInfo& p : captures)
        if (!p.python.error.empty())
          python_not_read[p.python.error].insert({r.index, pid});
  }
  for (const auto& [why, pids] : python_not_read)
    s.python_not_read.emplace_back(why, static_cast<uint32_t>(pids.size()));
  s.duration_s = duration_ns / 1e9;
  s.losses = format::totals_by_cause(losses);
  return s;
}

double duration_s(const Recording& r) {
  uint64_t start = r.info.start_monotonic_ns;
  uint64_t end = r.end ? r.end->end_monotonic_ns : r.last_sample_ns;
  if (r.window_start_ns)
    start = std::max(start, *r.window_start_ns);
  if (r.window_end_ns)
    end = std::min(end, *r.window_end_ns);
  return end > start ? (end - start) / 1e9 : 0;
}

bool is_clock_event(const std::string& event) {
  return event == "cpu-clock" || event == "task-clock";
}

uint64_t sample_weight(const format::RecordingInfo& info) {
  if (info.sample_period)
    return info.sample_period;
  return info.sample_frequency && is_clock_event(info.event) ? 1'000'000'000 / info.sample_frequency
                                                             : 0;
}

uint64_t weight_of(const format::RecordingInfo& info, const format::Sample& s) {
  if (s.blocked_ns)
    return s.blocked_ns;
  if (s.period)
    return s.period;
  return std::max<uint64_t>(sample_weight(info), 1);
}

std::vector<format::LossCount> loss_totals(const Recording& r) {
  if (r.end)
    return r.end->losses;
  std::vector<format::LossCount> all;
  for (const format::Losses& report : r.loss_reports)
    all.insert(all.end(), report.counts.begin(), report.counts.end());
  return format::totals_by_cause(all);
}

}  // namespace ebprof::report
