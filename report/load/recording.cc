#include "report/load/recording.h"

#include <algorithm>
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
  RecordingBuilder(std::vector<Recording>& out, const SampleFilter& filter, CommTable& comms,
                   const StackSeen& seen)
      : out_(out), first_(out.size()), filter_(filter), comms_(comms), seen_(seen) {
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
    cfi_.try_emplace(std::move(id), std::move(c));
  }
  void on_jit_symbols(format::JitSymbols&& j) override {
    auto& symbols = r_().jit_symbols[j.pid];
    symbols.insert(symbols.end(), j.symbols.begin(), j.symbols.end());
  }

  void finish();

 private:
  Recording& r_() { return out_.back(); }
  void begin_source() {
    const auto index = static_cast<uint32_t>(out_.size());
    out_.emplace_back().index = index;
    index_.clear();
    comm_ids_.clear();
  }
  uint32_t comm(uint32_t id) const {
    auto it = comm_ids_.find(id);
    return it == comm_ids_.end() ? lost_comm_ : it->second;
  }

  std::vector<Recording>& out_;
  const size_t first_;  // this file's first recording in out_
  const SampleFilter& filter_;
  CommTable& comms_;
  const StackSeen& seen_;
  const uint32_t lost_comm_ = comms_.intern(kLostComm);
  std::unordered_map<SampleKey, size_t, SampleKeyHash> index_;  // into counts
  std::unordered_map<uint32_t, uint32_t> comm_ids_;             // the file's id: the report's
  std::unordered_map<std::string, format::EmbeddedSymbols> embedded_;
  std::unordered_map<std::string, format::ElfCfi> cfi_;

  void keep_windows(format::SampleBatch& batch) {
    Recording& r = r_();
    r.blocks.add(batch.first_block_id, std::move(batch.blocks), r.info.stack_block_bytes);
    r.windows.add(batch.first_window_id, std::move(batch.windows));
  }
};

void RecordingBuilder::on_samples(format::SampleBatch&& batch) {
  Recording& r = r_();
  const uint64_t period = sample_weight(r.info);
  const View view = view_of(filter_, r.info);
  const size_t defined = batch.stacks.size();  // moved into the recording next
  r.stacks.add(batch.first_stack_id, std::move(batch.stacks));
  for (size_t i = 0; i < batch.comms.size(); ++i)
    comm_ids_.emplace(batch.first_comm_id + i, comms_.intern(batch.comms[i]));
  keep_windows(batch);
  std::vector<bool> used(seen_ ? defined : 0);  // the batch's stacks seen_ was told of
  for (const format::Sample& s : batch.samples) {
    // What --view leaves out is not part of this report at all: no
    // "filtered" in the header for intervals of an on-CPU view.
    if (!in_view(view, s))
      continue;
    ++r.recorded_samples;
    const uint32_t comm_id = comm(s.comm_id);
    if (!keeps(filter_, s, comms_.names()[comm_id], r.info.start_monotonic_ns))
      continue;
    const bool woken = s.waker_stack_id != format::kNoWaker;
    const SampleKey key{
        .stack = {r.index, s.pid, capture_at(r, s.pid, s.time_ns), s.stack_id, s.window_id},
        .tid = s.tid,
        .comm = comm_id,
        .cpu = s.cpu,
        .state = thread_state(s),
        .waker = woken ? StackRef{r.index, s.waker_pid, capture_at(r, s.waker_pid, s.time_ns),
                                  s.waker_stack_id}
                       : StackRef{},
        .waker_comm = woken ? comm(s.waker_comm_id) : 0,
    };
    if (const uint64_t i = uint64_t{s.stack_id} - batch.first_stack_id;
        i < used.size() && !used[i]) {
      used[i] = true;
      seen_(r, {key.stack.source, key.stack.pid, key.stack.capture, key.stack.stack});
    }
    auto [it, inserted] = index_.try_emplace(key, r.counts.size());
    if (inserted)
      r.counts.emplace_back(key, SampleValues{});
    r.counts[it->second].second.add(1, s.blocked_ns == 0 ? period : s.blocked_ns);
    ++r.total_samples;
    r.last_sample_ns = std::max(r.last_sample_ns, s.time_ns);
  }
}

void RecordingBuilder::finish() {
  // Keyed by build-id, whichever source brought them: built once, shared.
  auto tables = std::make_shared<EmbeddedTables>();
  for (auto& [id, e] : embedded_)
    tables->try_emplace(id, ElfIdentity{id, ""}, std::move(e.segments), std::move(e.symbols));
  auto cfi = std::make_shared<std::unordered_map<std::string, format::ElfCfi>>(std::move(cfi_));
  for (size_t i = first_; i < out_.size(); ++i) {
    Recording& r = out_[i];
    r.embedded_cfi = cfi;
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

uint32_t CommTable::intern(const std::string& comm) {
  auto [it, inserted] = index_.try_emplace(comm, static_cast<uint32_t>(names_.size()));
  if (inserted)
    names_.push_back(comm);
  return it->second;
}

void load_recordings(const std::string& path, const SampleFilter& filter, CommTable& comms,
                     std::vector<Recording>& out, const StackSeen& seen) {
  const size_t first = out.size();
  RecordingBuilder builder(out, filter, comms, seen);
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
                                CommTable& comms, const StackSeen& seen) {
  std::vector<Recording> all;
  for (const std::string& path : paths)
    load_recordings(path, filter, comms, all, seen);
  share_embedded_symbols(all);
  return all;
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
