#include "record/side_band.h"

#include <algorithm>
#include <cerrno>

#include "common/error.h"

namespace ebprof::record {

SideBand::SideBand(const std::vector<int>& cpus) : map_(create_perf_event_array("ebprof_tasks")) {
  auto handler = [this](int, std::span<const std::byte> record) {
    if (std::optional<TaskEvent> e = decode_task_event(record))
      out_->push_back(std::move(*e));
  };
  try {
    ring_ =
        std::make_unique<PerfRing>(map_.get(), kPagesPerCpu, task_event_attr(true), cpus, handler);
  } catch (const Error& e) {
    // Older kernels reject the build_id bit; the recorder then reads
    // build-ids from the mapped files.
    if (e.code() != EINVAL)
      throw;
    ring_ =
        std::make_unique<PerfRing>(map_.get(), kPagesPerCpu, task_event_attr(false), cpus, handler);
  }
}

void SideBand::drain(std::vector<TaskEvent>& out) {
  const size_t first = out.size();
  out_ = &out;
  ring_->consume();
  // Each CPU's ring is in time order; across CPUs they interleave.
  std::stable_sort(out.begin() + static_cast<ptrdiff_t>(first), out.end(),
                   [](const TaskEvent& a, const TaskEvent& b) { return a.time_ns < b.time_ns; });
}

}  // namespace ebprof::record
