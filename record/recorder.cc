#include "record/recorder.h"

#include <algorithm>
#include <cstring>

#include "bpf/profile.h"
#include "format/lookup.h"
#include "record/host_info.h"
#include "record/sample_decoder.h"

namespace ebprof::record {

Recorder::Recorder(format::RecordingWriter& writer, KernelSymbolIndex kernel_symbols,
                   ProcessTracker& tracker, std::optional<SymbolEmbedder> embedder,
                   LossLedger& ledger, format::CallGraph call_graph)
    : writer_(writer),
      tracker_(tracker),
      ledger_(ledger),
      kernel_symbols_(std::move(kernel_symbols)),
      schedule_(kernel_symbols_.find("__schedule")),
      try_to_wake_up_(kernel_symbols_.find("try_to_wake_up")),
      embedder_(std::move(embedder)) {
  if (call_graph == format::CallGraph::kDwarf) {
    windows_.emplace();
    if (embedder_)
      cfi_.emplace();
  } else {
    leaf_repair_.emplace();
  }
}

uint32_t Recorder::intern_comm(std::string_view comm) {
  auto [it, inserted] = comm_ids_.try_emplace(std::string(comm), comms_defined_);
  if (inserted) {
    batch_.comms.emplace_back(comm);
    ++comms_defined_;
  }
  return it->second;
}

uint32_t Recorder::intern_cgroup(uint64_t id) {
  if (id == 0 || !cgroup_paths_.available())
    return format::kNoCgroup;
  auto [it, inserted] =
      cgroup_indexes_.try_emplace(id, static_cast<uint32_t>(batch_.cgroups.size()));
  if (inserted)
    batch_.cgroups.push_back({id, cgroup_paths_.path(id)});
  return it->second;
}

void Recorder::on_record(std::span<const std::byte> record) {
  std::optional<RawSample> s = decode_sample(record);
  if (!s) {
    ledger_.count_malformed();
    return;
  }
  if (s->switch_window) {
    answer_code_question(*s);
    keep_switch_window(*s);
    return;
  }
  if (batch_.samples.empty())
    batch_started_ns_ = monotonic_ns();

  // The tracing glue above the scheduler and the wakeup, which differs by
  // hook and kernel, is cut.
  if (s->off_cpu)
    s->kernel = KernelSymbolIndex::from(s->kernel, schedule_);
  if (s->waker)
    s->kernel = KernelSymbolIndex::from(s->kernel, try_to_wake_up_);
  // The words of the sample are looked up in maps that must be its own.
  tracker_.catch_up(s->tgid, s->user.empty() ? 0 : s->user[0], s->time_ns);
  answer_code_question(*s);
  uint32_t window = format::kNoWindow;
  s->user = user_stack(*s, window);
  const uint32_t stack_id = intern_stack(*s);
  if (s->waker) {
    // The interval it belongs to came just before from the same CPU; it is
    // still in this batch unless the batch was written in between.
    auto it = awaiting_waker_.find(s->peer);
    if (it != awaiting_waker_.end()) {
      format::Sample& woken = batch_.samples[it->second];
      woken.waker_stack_id = stack_id;
      woken.waker_pid = s->tgid;
      woken.waker_tid = s->tid;
      woken.waker_comm_id = intern_comm(s->comm);
      awaiting_waker_.erase(it);
    }
    return;
  }
  if (s->waker_follows)
    awaiting_waker_[s->tid] = batch_.samples.size();
  batch_.samples.push_back(format::Sample{
      s->time_ns, s->tgid, s->tid, static_cast<uint16_t>(s->cpu), stack_id, intern_comm(s->comm),
      s->blocked_ns, static_cast<format::BlockState>(s->state)});
  batch_.samples.back().window_id = window;
  batch_.samples.back().cgroup = intern_cgroup(s->cgroup_id);
  batch_.samples.back().holds_gil = s->holds_gil;
  batch_.samples.back().period = s->period;
  ++stats_.samples;
  stats_.off_cpu += s->off_cpu;
  if (batch_.samples.size() >= kMaxBatchSamples)
    flush(0, true);
}

uint32_t Recorder::intern_stack(const RawSample& s) {
  auto [stack_id, is_new] = interner_.intern(s.kernel, s.user, s.python, s.python_end);
  if (is_new) {
    batch_.stacks.push_back(interner_.stack(stack_id));
    kernel_symbols_.take_new(s.kernel, pending_kernel_symbols_);
  }
  if (auto process = tracker_.observe(s.tgid, s.user, is_new, s.time_ns)) {
    if (cfi_)
      cfi_->take(*process);
    if (python_)
      python_->inspect(*process);
    writer_.write(*process);
  }
  if (python_)
    python_->take_new(s.tgid, stack_id, s.python);
  // After observe(), so that a new stack's mappings are known.
  if (is_new && cfi_)
    // Where the window runs out, the report goes on along the frame
    // pointers from the frame it reached, whose CFI it asks first.
    for (size_t i = 0; i < s.user.size(); ++i)
      cfi_->take_pc(s.tgid, format::lookup_address(s.user, i), tracker_);
  if (is_new && embedder_) {
    uint64_t start = monotonic_ns();
    embedder_->take_new(s.tgid, s.user, tracker_);
    stats_.embed_ns += monotonic_ns() - start;
  }
  return stack_id;
}

void Recorder::keep_switch_window(const RawSample& s) {
  if (switch_windows_.size() >= kMaxSwitchWindows)
    switch_windows_.clear();  // threads that left and never came back in view
  SwitchWindow& w = switch_windows_[s.tid];
  w.time_ns = s.time_ns;
  w.abi = s.user_abi;
  w.regs.assign(s.user_regs.begin(), s.user_regs.end());
  w.stack.assign(s.user_stack.begin(), s.user_stack.end());
  w.python.assign(s.python.begin(), s.python.end());
  w.python_end = s.python_end;
  // Named now: the interval's record comes when the thread runs again,
  // which may be after its process exits.
  if (python_)
    python_->take_new(s.tgid, PythonProcesses::kNotInterned, s.python);
}

std::span<const uint64_t> Recorder::user_stack(RawSample& s, uint32_t& window) {
  if (s.waker)
    return s.user;
  UserContext user{s.user_abi, s.user_regs, s.user_stack};
  if (s.off_cpu) {
    // The interval's own registers and stack, from when it began.
    auto it = switch_windows_.find(s.tid);
    if (it == switch_windows_.end() || it->second.time_ns != s.time_ns - s.blocked_ns)
      return s.user;
    user = {it->second.abi, it->second.regs, it->second.stack};
    s.python = it->second.python;
    s.python_end = it->second.python_end;
  }
  if (windows_)
    window = intern_window(s.tgid, user);
  stats_.stack_copies += leaf_repair_ && !user.stack.empty();
  return leaf_repair_ ? leaf_repair_->repair(s.tgid, s.user, user.regs, user.stack, tracker_)
                      : s.user;
}

void Recorder::answer_code_question(const RawSample& s) {
  if (!s.code_unknown || !leaf_repair_ || !publish_frameless_code_ || s.user_regs.empty())
    return;
  const ebprof_code_key key{s.tgid, s.image, s.user_regs[0] >> EBPROF_CODE_REGION_SHIFT};
  if (std::optional<uint64_t> granules =
          leaf_repair_->frameless_granules(s.tgid, s.user_regs[0], tracker_))
    publish_frameless_code_(key, *granules);
}

uint32_t Recorder::intern_window(uint32_t pid, const UserContext& user) {
  if (user.stack.empty() || user.regs.size() <= kUserStackPointer)
    return format::kNoWindow;
  const uint64_t base = user.regs[kUserStackPointer];
  const uint32_t id = windows_->intern(user.regs, user.abi, base, user.stack, batch_);
  // The code the new blocks' words point into: what the window's frames
  // may be, whose symbols and CFI a report elsewhere needs.
  if (cfi_)
    cfi_->take_pc(pid, user.regs[0], tracker_);
  if (embedder_)
    for (uint64_t at : windows_->new_block_addresses()) {
      const uint64_t from = std::max(at, base) - base;
      const uint64_t to =
          std::min<uint64_t>(at + StackWindows::kBlockBytes - base, user.stack.size());
      const std::span<const std::byte> words = user.stack.subspan(from, to - from);
      embedder_->take_words(pid, words, tracker_);
      if (cfi_)
        cfi_->take_words(pid, words, tracker_);
    }
  return id;
}

void Recorder::write_losses(uint64_t now_ns) {
  if (std::optional<format::Losses> report = ledger_.take_report(now_ns))
    writer_.write(*report);
}

void Recorder::start_file() {
  stacks_in_earlier_files_ += interner_.size();
  interner_.restart();
  comm_ids_.clear();
  comms_defined_ = 0;
  batch_.first_stack_id = 0;
  batch_.first_comm_id = 0;
  if (windows_) {
    windows_->restart();
    batch_.first_block_id = 0;
    batch_.first_window_id = 0;
  }
  kernel_symbols_.forget_taken();
  tracker_.forget_written();
  if (embedder_)
    embedder_->forget_taken();
  if (cfi_)
    cfi_->forget();
  if (python_)
    python_->forget_taken();
}

void Recorder::write_names() {
  if (!pending_kernel_symbols_.empty()) {
    writer_.write(pending_kernel_symbols_);
    pending_kernel_symbols_.clear();
  }
  if (embedder_) {
    for (const format::EmbeddedSymbols& symbols : embedder_->drain())
      writer_.write(symbols);
    for (const format::JitSymbols& symbols : embedder_->drain_jit())
      writer_.write(symbols);
  }
  if (cfi_)
    for (const format::ElfCfi& tables : cfi_->drain())
      writer_.write(tables);
  if (python_)
    for (const format::PythonCode& code : python_->drain())
      writer_.write(code);
}

void Recorder::name_missed_jit() {
  if (embedder_)
    embedder_->name_missed_jit();
}

void Recorder::flush(uint64_t now_ns, bool force) {
  // Samples reach us well within a second of being taken: side-band events
  // older than that can be applied, and processes gone for long forgotten.
  if (now_ns > kMaxBatchAgeNs) {
    tracker_.advance(now_ns - kMaxBatchAgeNs);
    if (embedder_)
      embedder_->forget_gone(tracker_);
    if (python_)
      for (uint32_t pid : python_->pids())
        if (!tracker_.place(pid))
          python_->forget(pid);
  }
  if (batch_.samples.empty()) {
    // JIT code named at the end, after the last batch.
    if (force)
      write_names();
    return;
  }
  if (!force && now_ns < batch_started_ns_ + kMaxBatchAgeNs)
    return;
  // The symbols a batch's stacks need go before it, so a file cut after
  // the batch can name it.
  write_names();
  writer_.write(batch_);
  // Each batch defines the stacks, comms and stack windows its samples
  // use: one damaged batch then costs its own samples, not the stacks of
  // every later one.
  interner_.forget();
  comm_ids_.clear();
  batch_.first_stack_id = interner_.size();
  batch_.first_comm_id = comms_defined_;
  batch_.stacks.clear();
  batch_.comms.clear();
  batch_.cgroups.clear();
  cgroup_indexes_.clear();
  batch_.samples.clear();
  if (windows_) {
    windows_->forget();
    batch_.first_block_id = windows_->blocks();
    batch_.first_window_id = windows_->windows();
    batch_.blocks.clear();
    batch_.windows.clear();
  }
  awaiting_waker_.clear();  // indexes into the batch just written
}

}  // namespace ebprof::record
