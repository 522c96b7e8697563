#include "report/load/sample_filter.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "common/error.h"

namespace ebprof::report {
namespace {

std::optional<double> parse_seconds(std::string_view s, const std::string& whole) {
  if (s.empty())
    return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 0 || !std::isfinite(value))
    throw Error("--time " + whole + ": expected START,END in seconds, e.g. 1.5,3 or ,2");
  return value;
}

template <typename T>
bool listed(const std::vector<T>& list, const T& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

View parse_view(const std::string& name) {
  if (name == "oncpu")
    return View::kOnCpu;
  if (name == "offcpu")
    return View::kOffCpu;
  if (name == "wall")
    return View::kWall;
  throw Error("--view " + name + ": use oncpu, offcpu or wall");
}

View view_of(const SampleFilter& filter, const format::RecordingInfo& info) {
  return filter.view ? *filter.view : info.sampling ? View::kOnCpu : View::kOffCpu;
}

void parse_time_window(const std::string& text, SampleFilter& filter) {
  size_t comma = text.find(',');
  if (comma == std::string::npos)
    throw Error("--time " + text + ": expected START,END in seconds, e.g. 1.5,3 or ,2");
  filter.time_start_s = parse_seconds(std::string_view(text).substr(0, comma), text);
  filter.time_end_s = parse_seconds(std::string_view(text).substr(comma + 1), text);
  if (filter.time_start_s && filter.time_end_s && *filter.time_end_s < *filter.time_start_s)
    throw Error("--time " + text + ": the end is before the start");
}

bool keeps(const SampleFilter& f, const format::Sample& s, const std::string& comm,
           uint64_t start_ns) {
  if (s.pid == 0 && !f.include_idle)
    return false;
  if (!listed(f.pids, s.pid) || !listed(f.tids, s.tid) ||
      !listed(f.cpus, static_cast<uint32_t>(s.cpu)) || !listed(f.comms, comm))
    return false;
  if (f.time_start_s || f.time_end_s) {
    const double start_s = start_ns / 1e9, t = s.time_ns / 1e9;
    // A bound at or past the recording's start is absolute; below, relative.
    auto absolute = [&](double bound) { return bound >= start_s ? bound : start_s + bound; };
    if (f.time_start_s && t < absolute(*f.time_start_s))
      return false;
    if (f.time_end_s && t >= absolute(*f.time_end_s))
      return false;
  }
  return true;
}

}  // namespace ebprof::report
