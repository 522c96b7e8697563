#include "report/load/sample_keys.h"

namespace ebprof::report {

void SampleKeys::begin_batch(const Recording& r, const format::SampleBatch& batch) {
  recording_ = &r;
  view_ = view_of(filter_, r.info);
  for (size_t i = 0; i < batch.comms.size(); ++i)
    comm_ids_.emplace(batch.first_comm_id + i, names_.intern(batch.comms[i]));
  cgroups_.clear();
  for (const format::Cgroup& c : batch.cgroups)
    cgroups_.push_back(names_.intern(cgroup_name(c)));
}

uint32_t SampleKeys::comm(uint32_t id) const {
  auto it = comm_ids_.find(id);
  return it == comm_ids_.end() ? lost_comm_ : it->second;
}

SampleVerdict SampleKeys::key(const format::Sample& s, SampleKey& key) const {
  if (!in_view(view_, s))
    return SampleVerdict::kOutOfView;
  const Recording& r = *recording_;
  const uint32_t comm_id = comm(s.comm_id);
  if (!keeps(filter_, s, names_.all()[comm_id], start_of(r.info)))
    return SampleVerdict::kFiltered;
  const bool woken = s.waker_stack_id != format::kNoWaker;
  key = SampleKey{
      .stack = {r.index, s.pid, capture_at(r.processes, s.pid, s.time_ns), s.stack_id, s.window_id},
      .tid = s.tid,
      .comm = comm_id,
      .cgroup = s.cgroup < cgroups_.size() ? cgroups_[s.cgroup] : 0,
      .cpu = s.cpu,
      .state = thread_state(s),
      .waker = woken ? StackRef{r.index, s.waker_pid,
                                capture_at(r.processes, s.waker_pid, s.time_ns), s.waker_stack_id}
                     : StackRef{},
      .waker_comm = woken ? comm(s.waker_comm_id) : 0,
      .slice = slice_of(filter_, s, start_of(r.info)),
  };
  return SampleVerdict::kKept;
}

ThreadState thread_state(const format::Sample& s) {
  if (s.blocked_ns == 0)
    return ThreadState::kOnCpu;
  const auto state = static_cast<uint8_t>(s.state);
  return state < format::kBlockStates ? static_cast<ThreadState>(state) : ThreadState::kUnknown;
}

}  // namespace ebprof::report
