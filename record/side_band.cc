#include "record/side_band.h"

#include <algorithm>

#include "common/error.h"

namespace ebprof::record {

SideBand::SideBand(const std::vector<int>& cpus) : map_(create_perf_event_array("ebprof_tasks")) {
  auto handler = [this](int, std::span<const std::byte> record) {
    if (std::optional<TaskEvent> e = decode_task_event(record))
      out_->push_back(std::move(*e));
  };
  ring_ = std::make_unique<PerfRing>(map_.get(), kPagesPerCpu, task_event_attr(), cpus, handler);
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
