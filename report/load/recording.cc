#include "report/load/recording.h"

#include <algorithm>
#include <deque>
#include <set>

#include "format/lookup.h"
#include "format/reader.h"
#include "report/load/summary.h"

namespace ebprof::report {
namespace {

// Builds one Recording per source of a file, in the order the reader
// says frames belong to them.
class RecordingBuilder : public format::RecordingVisitor {
 public:
  RecordingBuilder(std::vector<Recording>& out, const SampleFilter& filter, NameTable& names,
                   const LoadHooks& hooks)
      : out_(out), first_(out.size()), filter_(filter), names_(names), hooks_(hooks) {
    begin_source();
  }

  // Every frame of a source lands in its recording (the script's sample
  // stream follows the same index).
  void on_frame(const format::FrameInfo& frame) override {
    while (out_.size() - first_ <= frame.source)
      begin_source();
    auto& sections = r_().sections;
    auto it = std::find_if(sections.begin(), sections.end(),
                           [&](const FileSection& s) { return s.kind == frame.kind; });
    if (it == sections.end())
      it = sections.insert(sections.end(), FileSection{frame.kind});
    ++it->frames;
    it->stored_bytes += frame.stored_size + 16;  // with the frame header
    it->raw_bytes += frame.raw_size;
  }
  void on_info(format::RecordingInfo&& info) override { r_().info = std::move(info); }
  void on_source(format::Source&& source) override { r_().source = std::move(source); }
  void on_kernel_symbols(std::vector<format::KernelSymbol>&& symbols) override {
    std::move(symbols.begin(), symbols.end(), std::back_inserter(r_().kernel_symbols));
  }
  void on_process(format::ProcessInfo&& process) override {
    auto& captures = r_().processes[process.pid];
    // Append only: samples already counted keep their capture index. The
    // recorder writes captures in time order; one out of order is dropped.
    if (!captures.empty() && process.captured_at_ns < captures.back().captured_at_ns)
      return;
    format::sort_by_start(process.mappings);
    captures.push_back(std::move(process));
  }
  void on_samples(format::SampleBatch&& batch) override;
  void on_end(format::RecordingEnd&& end) override { r_().end = std::move(end); }
  void on_losses(format::Losses&& losses) override {
    r_().loss_reports.push_back(std::move(losses));
  }
  void on_elf_symbols(format::EmbeddedSymbols&& e) override {
    // A binary's symbols arrive over several frames, as samples reach them.
    auto [it, inserted] = embedded_.try_emplace(e.build_id, std::move(e));
    if (!inserted)
      it->second.symbols.insert(it->second.symbols.end(), e.symbols.begin(), e.symbols.end());
  }
  void on_elf_cfi(format::ElfCfi&& c) override {
    std::string id = c.build_id;
    cfi_->try_emplace(std::move(id), std::move(c));
  }
  void on_jit_symbols(format::JitSymbols&& j) override {
    auto& symbols = r_().jit_symbols[j.pid];
    symbols.insert(symbols.end(), j.symbols.begin(), j.symbols.end());
  }

  void finish();

 private:
  Recording& r_() { return out_.back(); }
  void begin_source() {
    if (out_.size() > first_)
      settle_all();
    const auto index = static_cast<uint32_t>(out_.size());
    Recording& r = out_.emplace_back();
    r.index = index;
    r.embedded_cfi = cfi_;  // what unwinding reads as the file streams
    index_.clear();
    comm_ids_.clear();
    next_window_ = 0;
  }
  uint32_t comm(uint32_t id) const {
    auto it = comm_ids_.find(id);
    return it == comm_ids_.end() ? lost_comm_ : it->second;
  }

  std::vector<Recording>& out_;
  const size_t first_;  // this file's first recording in out_
  const SampleFilter& filter_;
  NameTable& names_;
  const LoadHooks& hooks_;
  const uint32_t lost_comm_ = names_.intern(kLostComm);
  std::unordered_map<SampleKey, size_t, SampleKeyHash> index_;  // into counts
  std::unordered_map<uint32_t, uint32_t> comm_ids_;             // the file's id: the report's
  std::unordered_map<std::string, format::EmbeddedSymbols> embedded_;
  // Shared by the file's sources (all of them may need any), and read by
  // the unwinding as it streams.
  std::shared_ptr<std::unordered_map<std::string, format::ElfCfi>> cfi_ =
      std::make_shared<std::unordered_map<std::string, format::ElfCfi>>();

  // A batch's samples by key, counted but not settled yet.
  struct Pending {
    uint32_t first_window = 0;  // the batch's: what its samples may reach back from
    std::vector<std::pair<SampleKey, SampleValues>> counts;
    std::unordered_map<SampleKey, size_t, SampleKeyHash> index;  // into counts
  };
  // A batch is settled once this many later ones were read: the maps
  // captures its samples need come within a second or so after them (the
  // recorder applies side-band events a second late, and batches last a
  // second), and an address a sample's capture lacks is looked up in later
  // captures.
  static constexpr size_t kSettleLag = 2;
  std::deque<Pending> pending_;
  void settle_oldest();
  void settle_all() {
    while (!pending_.empty())
      settle_oldest();
  }
  // Lets go of the windows no sample still to come can use.
  void forget_windows();

  void keep_windows(format::SampleBatch& batch) {
    Recording& r = r_();
    r.blocks.add(batch.first_block_id, std::move(batch.blocks), r.info.stack_block_bytes);
    next_window_ = batch.first_window_id + batch.windows.size();
    r.windows.add(batch.first_window_id, std::move(batch.windows));
  }
  uint64_t next_window_ = 0;  // the source's: the id after its last window read
};

void RecordingBuilder::on_samples(format::SampleBatch&& batch) {
  Recording& r = r_();
  const uint64_t period = sample_weight(r.info);
  const View view = view_of(filter_, r.info);
  const size_t defined = batch.stacks.size();  // moved into the recording next
  r.stacks.add(batch.first_stack_id, std::move(batch.stacks));
  for (size_t i = 0; i < batch.comms.size(); ++i)
    comm_ids_.emplace(batch.first_comm_id + i, names_.intern(batch.comms[i]));
  // Only a recording with windows, in a report that unwinds them, counts
  // a batch's keys aside until they are settled; the rest count at once.
  const bool settles = hooks_.settle_windows && r.info.call_graph == format::CallGraph::kDwarf;
  if (settles)
    pending_.emplace_back().first_window = batch.first_window_id;
  auto& counts = settles ? pending_.back().counts : r.counts;
  auto& index = settles ? pending_.back().index : index_;
  keep_windows(batch);
  std::vector<bool> used(hooks_.stack_seen ? defined : 0);  // the batch's stacks told of
  std::vector<uint32_t> cgroups;                            // the batch's, as names
  for (const format::Cgroup& c : batch.cgroups)
    cgroups.push_back(names_.intern(cgroup_name(c)));
  for (const format::Sample& s : batch.samples) {
    // What --view leaves out is not part of this report at all: no
    // "filtered" in the header for intervals of an on-CPU view.
    if (!in_view(view, s)) {
      ++(s.blocked_ns ? r.unviewed_intervals : r.unviewed_samples);
      continue;
    }
    ++r.recorded_samples;
    const uint32_t comm_id = comm(s.comm_id);
    if (!keeps(filter_, s, names_.all()[comm_id], start_of(r.info))) {
      r.idle_samples += s.pid == 0 && !filter_.include_idle;
      continue;
    }
    const bool woken = s.waker_stack_id != format::kNoWaker;
    const SampleKey key{
        .stack = {r.index, s.pid, capture_at(r, s.pid, s.time_ns), s.stack_id, s.window_id},
        .tid = s.tid,
        .comm = comm_id,
        .cgroup = s.cgroup < cgroups.size() ? cgroups[s.cgroup] : 0,
        .cpu = s.cpu,
        .state = thread_state(s),
        .waker = woken ? StackRef{r.index, s.waker_pid, capture_at(r, s.waker_pid, s.time_ns),
                                  s.waker_stack_id}
                       : StackRef{},
        .waker_comm = woken ? comm(s.waker_comm_id) : 0,
        .slice = slice_of(filter_, s, start_of(r.info)),
    };
    if (const uint64_t i = uint64_t{s.stack_id} - batch.first_stack_id;
        i < used.size() && !used[i]) {
      used[i] = true;
      hooks_.stack_seen(r, {key.stack.source, key.stack.pid, key.stack.capture, key.stack.stack});
    }
    auto [it, inserted] = index.try_emplace(key, counts.size());
    if (inserted)
      counts.emplace_back(key, SampleValues{});
    counts[it->second].second.add(1, s.blocked_ns == 0 ? period : s.blocked_ns);
    ++r.total_samples;
    r.last_sample_ns = std::max(r.last_sample_ns, s.time_ns);
  }
  while (pending_.size() > kSettleLag)
    settle_oldest();
}

void RecordingBuilder::settle_oldest() {
  Recording& r = r_();
  Pending p = std::move(pending_.front());
  pending_.pop_front();
  settle_keys(hooks_.settle_windows, r, r.windows, p.counts);
  forget_windows();
  // In the order the keys first appeared, as they would unsettled.
  for (auto& [key, values] : p.counts) {
    auto [it, inserted] = index_.try_emplace(key, r.counts.size());
    if (inserted)
      r.counts.emplace_back(key, values);
    else
      r.counts[it->second].second.add(values.count, values.time_ns);
  }
}

void RecordingBuilder::forget_windows() {
  Recording& r = r_();
  if (r.info.window_reach == 0)
    return;  // an older file: a sample may use any window defined before it
  // The samples still to come are those of the pending batches and of
  // batches not read yet: they reach back from the oldest pending batch's
  // first window, or with none pending, from the next window's id.
  r.windows.forget_before(first_window_reached(
      r.info, pending_.empty() ? next_window_ : pending_.front().first_window));
}

void RecordingBuilder::finish() {
  settle_all();
  // Keyed by build-id, whichever source brought them: built once, shared.
  auto tables = std::make_shared<EmbeddedTables>();
  for (auto& [id, e] : embedded_)
    tables->try_emplace(id, ElfIdentity{id, ""}, std::move(e.segments), std::move(e.symbols));
  for (size_t i = first_; i < out_.size(); ++i) {
    Recording& r = out_[i];
    // Stable: at an address reused for new code, the name written last wins.
    for (auto& [pid, symbols] : r.jit_symbols)
      std::stable_sort(symbols.begin(), symbols.end(),
                       [](const auto& a, const auto& b) { return a.address < b.address; });
    std::stable_sort(r.kernel_symbols.begin(), r.kernel_symbols.end(),
                     [](const auto& a, const auto& b) { return a.address < b.address; });
    r.embedded_symbols = tables;
  }
}

// Gives all `recordings` one embedded-symbol map, the union of theirs.
void share_embedded_symbols(std::span<Recording> recordings) {
  std::set<const EmbeddedTables*> distinct;
  for (const Recording& r : recordings)
    distinct.insert(r.embedded_symbols.get());
  if (distinct.size() < 2)
    return;
  std::unordered_map<std::string, std::vector<ElfSymbol>> symbols;
  std::unordered_map<std::string, std::vector<LoadSegment>> segments;
  for (const EmbeddedTables* tables : distinct)
    for (const auto& [id, table] : *tables) {
      symbols[id].insert(symbols[id].end(), table.symbols().begin(), table.symbols().end());
      if (segments[id].empty())
        segments[id] = table.segments();
    }
  auto shared = std::make_shared<EmbeddedTables>();
  for (auto& [id, list] : symbols)
    shared->try_emplace(id, ElfIdentity{id, ""}, std::move(segments[id]), std::move(list));
  for (Recording& r : recordings)
    r.embedded_symbols = shared;
}

}  // namespace

std::string cgroup_name(const format::Cgroup& cgroup) {
  return cgroup.path.empty() ? "[cgroup " + std::to_string(cgroup.id) + "]" : cgroup.path;
}

uint32_t NameTable::intern(const std::string& name) {
  auto [it, inserted] = index_.try_emplace(name, static_cast<uint32_t>(names_.size()));
  if (inserted)
    names_.push_back(name);
  return it->second;
}

void load_recordings(const std::string& path, const SampleFilter& filter, NameTable& names,
                     std::vector<Recording>& out, const LoadHooks& hooks) {
  const size_t first = out.size();
  RecordingBuilder builder(out, filter, names, hooks);
  const format::ReadResult result = format::read_recording(path, builder);
  builder.finish();
  for (size_t i = first; i < out.size(); ++i) {
    out[i].path = path;
    out[i].version_major = result.version_major;
    out[i].version_minor = result.version_minor;
  }
  // Where the file is damaged or cut, said once: the reader tells the file's
  // story, not a source's, and the last source is where reading stopped.
  out.back().warning = result.warning;
}

std::vector<Recording> load_all(std::span<const std::string> paths, const SampleFilter& filter,
                                NameTable& names, const LoadHooks& hooks) {
  std::vector<Recording> all;
  for (const std::string& path : paths)
    load_recordings(path, filter, names, all, hooks);
  share_embedded_symbols(all);
  return all;
}

uint32_t first_window_reached(const format::RecordingInfo& info, uint64_t first) {
  return info.window_reach == 0 || first < info.window_reach
             ? 0
             : static_cast<uint32_t>(std::min<uint64_t>(UINT32_MAX, first - info.window_reach));
}

ThreadState thread_state(const format::Sample& s) {
  if (s.blocked_ns == 0)
    return ThreadState::kOnCpu;
  const auto state = static_cast<uint8_t>(s.state);
  return state < format::kBlockStates ? static_cast<ThreadState>(state) : ThreadState::kUnknown;
}

uint32_t capture_at(const Recording& r, uint32_t pid, uint64_t time_ns) {
  auto it = r.processes.find(pid);
  if (it == r.processes.end())
    return 0;
  const auto& captures = it->second;
  auto after = std::upper_bound(
      captures.begin(), captures.end(), time_ns,
      [](uint64_t t, const format::ProcessInfo& c) { return t < c.captured_at_ns; });
  return after == captures.begin() ? 0 : static_cast<uint32_t>(after - captures.begin() - 1);
}

std::span<const format::ProcessInfo> captures_from(const Recording& r, const StackRef& ref) {
  auto it = r.processes.find(ref.pid);
  if (it == r.processes.end())
    return {};
  return std::span(it->second).subspan(std::min<size_t>(ref.capture, it->second.size()));
}

const format::Mapping* find_mapping(std::span<const format::ProcessInfo> captures,
                                    uint64_t address) {
  for (const auto& capture : captures)
    if (const format::Mapping* m = format::find_mapping(capture.mappings, address))
      return m;
  return nullptr;
}

}  // namespace ebprof::report
