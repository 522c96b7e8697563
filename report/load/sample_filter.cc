#include "report/load/sample_filter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "common/error.h"

namespace ebprof::report {
namespace {

// "2026-12-01T10:00:00", with a fraction of a second and a Z (UTC) if
// given, else local time: CLOCK_REALTIME nanoseconds.
std::optional<uint64_t> parse_date(std::string_view s, const std::string& whole) {
  const std::string text(s);
  tm t{};
  int used = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%*1[T ]%2d:%2d:%2d%n", &t.tm_year, &t.tm_mon,
                  &t.tm_mday, &t.tm_hour, &t.tm_min, &t.tm_sec, &used) != 6)
    throw Error("--time " + whole + ": expected a date and time as 2026-12-01T10:00:00[.5][Z]");
  std::string_view rest = std::string_view(text).substr(static_cast<size_t>(used));
  double fraction = 0;
  if (rest.starts_with('.')) {
    std::string digits(1, '0');
    digits.append(rest.substr(0, rest.find_first_not_of("0123456789", 1)));
    fraction = std::strtod(digits.c_str(), nullptr);
    rest.remove_prefix(digits.size() - 1);
  }
  const bool utc = rest == "Z";
  if (!rest.empty() && !utc)
    throw Error("--time " + whole + ": expected a date and time as 2026-12-01T10:00:00[.5][Z]");
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  t.tm_isdst = -1;
  const time_t seconds = utc ? timegm(&t) : mktime(&t);
  if (seconds < 0)
    throw Error("--time " + whole + ": a date before 1970");
  return static_cast<uint64_t>(seconds) * 1'000'000'000 + static_cast<uint64_t>(fraction * 1e9);
}

bool is_date(std::string_view s) {
  return s.find('-', 1) != std::string_view::npos || s.find(':') != std::string_view::npos;
}

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
  const std::string_view start = std::string_view(text).substr(0, comma);
  const std::string_view end = std::string_view(text).substr(comma + 1);
  filter.time_start_s = filter.time_end_s = std::nullopt;
  filter.wall_start_ns = filter.wall_end_ns = std::nullopt;
  if (is_date(start))
    filter.wall_start_ns = parse_date(start, text);
  else
    filter.time_start_s = parse_seconds(start, text);
  if (is_date(end))
    filter.wall_end_ns = parse_date(end, text);
  else
    filter.time_end_s = parse_seconds(end, text);
  if ((filter.time_start_s && filter.time_end_s && *filter.time_end_s < *filter.time_start_s) ||
      (filter.wall_start_ns && filter.wall_end_ns && *filter.wall_end_ns < *filter.wall_start_ns))
    throw Error("--time " + text + ": the end is before the start");
}

std::pair<std::optional<uint64_t>, std::optional<uint64_t>> time_window(const SampleFilter& f,
                                                                        StartTime start) {
  std::optional<uint64_t> from, to;
  auto at_least = [&](uint64_t ns) { from = from ? std::max(*from, ns) : ns; };
  auto at_most = [&](uint64_t ns) { to = to ? std::min(*to, ns) : ns; };
  // As keeps() reads the bounds: relative below the start, else absolute.
  const double start_s = start.monotonic_ns / 1e9;
  auto absolute_ns = [&](double bound) {
    const double ns = (bound >= start_s ? bound : start_s + bound) * 1e9;
    return ns <= 0 ? uint64_t{0} : ns >= 0x1p64 ? UINT64_MAX : static_cast<uint64_t>(ns);
  };
  if (f.time_start_s)
    at_least(absolute_ns(*f.time_start_s));
  if (f.time_end_s)
    at_most(absolute_ns(*f.time_end_s));
  auto monotonic = [&](uint64_t wall) {
    const int64_t ns =
        static_cast<int64_t>(start.monotonic_ns) + static_cast<int64_t>(wall - start.realtime_ns);
    return static_cast<uint64_t>(std::max<int64_t>(ns, 0));
  };
  if (f.wall_start_ns)
    at_least(monotonic(*f.wall_start_ns));
  if (f.wall_end_ns)
    at_most(monotonic(*f.wall_end_ns));
  return {from, to};
}

bool keeps(const SampleFilter& f, const format::Sample& s, const std::string& comm,
           StartTime start) {
  const uint64_t start_ns = start.monotonic_ns;
  if ((s.pid == 0 && !f.include_idle) || (f.gil_only && !s.holds_gil))
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
  if (f.wall_start_ns || f.wall_end_ns) {
    const uint64_t wall = start.realtime_ns + (s.time_ns - start_ns);  // wraps back when earlier
    if ((f.wall_start_ns && wall < *f.wall_start_ns) || (f.wall_end_ns && wall >= *f.wall_end_ns))
      return false;
  }
  return true;
}

}  // namespace ebprof::report
