#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "format/contents.h"

namespace ebprof::report {

// Which samples a report counts, decided per sample while the recording is
// read, before anything is aggregated. Empty lists keep everything.
enum class View { kOnCpu, kOffCpu, kWall };
View parse_view(const std::string& name);  // oncpu, offcpu, wall; throws Error

struct SampleFilter {
  std::vector<uint32_t> pids, tids, cpus;
  std::vector<std::string> comms;
  // --time START,END in seconds: from the start of the recording, or
  // absolute (CLOCK_MONOTONIC, as `--format script` prints times) when at
  // least the recording's start. Either side may be open, or a date and
  // time (CLOCK_REALTIME, in nanoseconds), which holds across recordings.
  std::optional<double> time_start_s, time_end_s;
  std::optional<uint64_t> wall_start_ns, wall_end_ns;
  // --split: samples are told apart by their slice of wall-clock time of
  // this length (SampleKey::slice), at least a second; 0 without.
  uint64_t split_ns = 0;
  bool include_idle = false;  // the idle task (pid 0) is left out unless asked for
  bool gil_only = false;      // --gil: only CPython threads holding their interpreter's GIL
  // --view: samples on CPU, intervals off CPU (--off-cpu), or both; unset:
  // on CPU, or off CPU for a recording made with --off-cpu-only.
  std::optional<View> view;
};

// Parses --time "START,END" ("1.5,3", ",2", "8812.5,"), either side also a
// date and time, local or UTC ("2026-12-01T10:00:00", "...10:00:00.5Z").
// Throws Error when malformed.
void parse_time_window(const std::string& text, SampleFilter& filter);

// What `filter`'s --view shows; without one, what the recording holds:
// samples on CPU, or intervals off CPU for --off-cpu-only.
View view_of(const SampleFilter& filter, const format::RecordingInfo& info);
inline bool in_view(View view, const format::Sample& s) {
  return view == View::kWall || (view == View::kOnCpu) == (s.blocked_ns == 0);
}

// When a recording started, on both clocks: sample times are CLOCK_MONOTONIC.
struct StartTime {
  uint64_t monotonic_ns = 0;
  uint64_t realtime_ns = 0;
};
inline StartTime start_of(const format::RecordingInfo& info) {
  return {info.start_monotonic_ns, info.start_realtime_ns};
}

// --time's bounds on the clock of a recording that started at `start`
// (CLOCK_MONOTONIC ns), each where given: what keeps() keeps of it.
std::pair<std::optional<uint64_t>, std::optional<uint64_t>> time_window(const SampleFilter& filter,
                                                                        StartTime start);

// The wall-clock slice of `filter.split_ns` that sample `s` is in.
inline uint32_t slice_of(const SampleFilter& filter, const format::Sample& s, StartTime start) {
  return filter.split_ns
             ? static_cast<uint32_t>((start.realtime_ns + (s.time_ns - start.monotonic_ns)) /
                                     filter.split_ns)
             : 0;
}

// Whether `filter` keeps sample `s` of command `comm` from a recording that
// started at `start`.
bool keeps(const SampleFilter& filter, const format::Sample& s, const std::string& comm,
           StartTime start);

}  // namespace ebprof::report
