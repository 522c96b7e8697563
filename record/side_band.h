#pragma once

#include <cstdint>
#include <vector>

#include "common/unique_fd.h"
#include "record/perf_ring.h"
#include "record/task_events.h"

namespace ebprof::record {

// The kernel's account of every process's executable mappings, execs, forks
// and exits on all CPUs, as perf record's tracking event gives it. It is
// read on the recorder's schedule, never waking it.
class SideBand {
 public:
  static constexpr size_t kPagesPerCpu = 64;  // 256 KiB: a burst of a few hundred execs

  // Throws Error when the kernel refuses the events.
  explicit SideBand(const std::vector<int>& cpus);

  // Appends what arrived since the last call, sorted by time.
  void drain(std::vector<TaskEvent>& out);

 private:
  UniqueFd map_;
  std::vector<TaskEvent>* out_ = nullptr;
  std::unique_ptr<PerfRing> ring_;
};

}  // namespace ebprof::record
