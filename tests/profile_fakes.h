#pragma once

// Hand-built profiles for the writers' and aggregation's tests: frames by
// name, stacks by spec, no recording or symbolizer involved.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "report/model/profile.h"

namespace ebprof::report::fakes {

inline Frame fn(const std::string& name, const std::string& module = "app",
                FrameKind kind = FrameKind::kNative) {
  Frame f;
  f.kind = kind;
  f.name = name;
  f.system_name = name;
  f.module = module;
  return f;
}

inline Frame kernel_fn(const std::string& name) {
  return fn(name, "[kernel.kallsyms]", FrameKind::kKernel);
}

// A named frame at `address` of /bin/app, `offset` into its function.
inline Frame at(const std::string& name, uint64_t address, uint64_t offset) {
  Frame f = fn(name);
  f.address = address;
  f.offset = offset;
  f.path = "/bin/app";
  f.file_offset = address;
  return f;
}

struct StackSpec {
  std::string comm;
  uint32_t pid = 1, tid = 1;
  uint16_t cpu = 0;
  uint64_t count = 1;
  std::vector<Frame> frames;  // leaf first
  ThreadState state = ThreadState::kOnCpu;
  // What the samples stand for; 0: as the loader weighs samples on CPU,
  // their count times the summary's sample_weight.
  uint64_t weight = 0;
  std::string cgroup;  // "" for none
};

inline Profile make_profile(const std::vector<StackSpec>& specs, RecordingSummary summary = {}) {
  Profile p;
  p.summary = std::move(summary);
  p.names = {""};  // as NameTable: 0 is what an unkept field reads as
  auto name = [&](const std::string& text) {
    auto it = std::find(p.names.begin(), p.names.end(), text);
    if (it == p.names.end())
      it = p.names.insert(p.names.end(), text);
    return static_cast<uint32_t>(it - p.names.begin());
  };
  for (const StackSpec& s : specs) {
    std::vector<uint32_t> ids;
    for (const Frame& f : s.frames)
      ids.push_back(p.frames->intern(f));
    SampleKey key{.stack = {0, s.pid, 0, static_cast<uint32_t>(p.stacks.size())},
                  .tid = s.tid,
                  .comm = name(s.comm),
                  .cgroup = name(s.cgroup),
                  .cpu = s.cpu,
                  .state = s.state};
    const uint64_t weight = s.weight || s.state != ThreadState::kOnCpu
                                ? s.weight
                                : s.count * std::max<uint64_t>(p.summary.sample_weight, 1);
    p.stacks.push_back(
        {key, FrameView(p.frames->keep(std::move(ids)), p.frames.get()), {s.count, weight}});
  }
  return p;
}

// A summary of `samples` samples over `seconds` of cpu-clock at 99 Hz on 2 CPUs.
inline RecordingSummary summary_of(uint64_t samples, double seconds) {
  RecordingSummary s;
  s.event = "cpu-clock";
  s.sample_frequency = 99;
  s.sample_weight = 1'000'000'000 / 99;
  s.clock_event = true;
  s.cpu_count = 2;
  s.samples = s.recorded_samples = samples;
  s.duration_s = seconds;
  s.cpu_seconds = 2 * seconds;
  return s;
}

}  // namespace ebprof::report::fakes
