#include "report/load/load.h"

#include <algorithm>
#include <deque>
#include <set>
#include <tuple>

#include "format/lookup.h"
#include "format/reader.h"
#include "report/load/overlap.h"
#include "report/load/sample_keys.h"
#include "report/load/summary.h"

namespace ebprof::report {
namespace {

// Builds one Recording per source of a file, in the order the reader
// says frames belong to them.
class RecordingBuilder : public format::RecordingVisitor {
 public:
  RecordingBuilder(std::vector<Recording>& out, const SampleFilter& filter, NameTable& names,
                   const SettleStacks& settle, uint32_t first_index, Overlaps* overlaps)
      : out_(out),
        first_(out.size()),
        first_index_(first_index),
        filter_(filter),
        names_(names),
        settle_(settle),
        overlaps_(overlaps) {
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
    // Since 1.9 a binary's CFI comes in pieces, over several frames; a
    // whole table holds them all.
    auto it = cfi_->find(c.build_id);
    if (it == cfi_->end()) {
      std::string id = c.build_id;
      cfi_->emplace(std::move(id), std::move(c));
    } else if (!c.eh_frame.empty()) {
      it->second = std::move(c);
    } else if (it->second.eh_frame.empty()) {
      auto& pieces = it->second.pieces;
      pieces.insert(pieces.end(), std::make_move_iterator(c.pieces.begin()),
                    std::make_move_iterator(c.pieces.end()));
    }
  }
  void on_jit_symbols(format::JitSymbols&& j) override {
    auto& symbols = r_().jit_symbols[j.pid];
    symbols.insert(symbols.end(), j.symbols.begin(), j.symbols.end());
  }
  void on_python_code(format::PythonCode&& p) override {
    auto& by_address = r_().python_code[p.pid];
    for (format::CodeObject& c : p.codes)
      by_address[c.address].push_back(std::move(c));
  }

  void finish();

 private:
  Recording& r_() { return out_.back(); }
  void begin_source() {
    if (out_.size() > first_)
      settle_all();
    const auto index = first_index_ + static_cast<uint32_t>(out_.size());
    Recording& r = out_.emplace_back();
    r.index = index;
    r.embedded_cfi = cfi_;  // what unwinding reads as the file streams
    index_.clear();
    keys_.emplace(filter_, names_);
    next_window_ = 0;
  }

  std::vector<Recording>& out_;
  const size_t first_;  // this file's first recording in out_
  const uint32_t first_index_;
  const SampleFilter& filter_;
  NameTable& names_;
  const SettleStacks& settle_;
  Overlaps* overlaps_;                                          // null: every sample counted
  std::optional<SampleKeys> keys_;                              // the source's
  std::unordered_map<SampleKey, size_t, SampleKeyHash> index_;  // into counts
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
  keys_->begin_batch(r, batch);
  r.stacks.add(batch.first_stack_id, std::move(batch.stacks));
  Pending& p = pending_.emplace_back();
  p.first_window = batch.first_window_id;
  keep_windows(batch);
  SampleKey key;
  for (const format::Sample& s : batch.samples) {
    if (overlaps_ && overlaps_->seen_before(out_.size() - 1, s)) {
      ++r.duplicate_samples;
      continue;
    }
    const SampleVerdict verdict = keys_->key(s, key);
    // What --view leaves out is not part of this report at all: no
    // "filtered" in the header for intervals of an on-CPU view.
    if (verdict == SampleVerdict::kOutOfView) {
      ++(s.blocked_ns ? r.unviewed_intervals : r.unviewed_samples);
      continue;
    }
    ++r.recorded_samples;
    if (verdict == SampleVerdict::kFiltered) {
      r.idle_samples += s.pid == 0 && !filter_.include_idle;
      continue;
    }
    auto [it, inserted] = p.index.try_emplace(key, p.counts.size());
    if (inserted)
      p.counts.emplace_back(key, SampleValues{});
    p.counts[it->second].second.add(1, weight_of(r.info, s));
    r.sample_periods |= s.period != 0;
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
  if (settle_)
    settle_keys(settle_, r, r.windows, p.counts);
  forget_windows();
  // In the order the keys first appeared, as they would unsettled.
  for (auto& [key, values] : p.counts) {
    auto [it, inserted] = index_.try_emplace(key, r.counts.size());
    if (inserted)
      r.counts.emplace_back(key, values);
    else
      r.counts[it->second].second.add(values.count, values.weight);
  }
}

void RecordingBuilder::forget_windows() {
  Recording& r = r_();
  // An older file promises no reach: a sample may use any window defined
  // before it. Unsettled keys keep theirs.
  if (r.info.window_reach == 0 || !settle_)
    return;
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

namespace {

void load_file(const std::string& path, const SampleFilter& filter, NameTable& names,
               std::vector<Recording>& out, const SettleStacks& settle, uint32_t first_index,
               Overlaps* overlaps) {
  const size_t first = out.size();
  RecordingBuilder builder(out, filter, names, settle, first_index, overlaps);
  const format::ReadResult result = format::read_recording(path, builder);
  builder.finish();
  for (size_t i = first; i < out.size(); ++i) {
    out[i].path = path;
    out[i].version_major = result.version_major;
    out[i].version_minor = result.version_minor;
    std::tie(out[i].window_start_ns, out[i].window_end_ns) =
        time_window(filter, start_of(out[i].info));
  }
  // Where the file is damaged or cut, said once: the reader tells the file's
  // story, not a source's, and the last source is where reading stopped.
  out.back().warning = result.warning;
}

std::vector<Recording> load_files(std::span<const std::string> paths, const SampleFilter& filter,
                                  NameTable& names, const SettleStacks& settle,
                                  uint32_t first_index, Overlaps* overlaps) {
  std::vector<Recording> all;
  for (const std::string& path : paths)
    load_file(path, filter, names, all, settle, first_index, overlaps);
  share_embedded_symbols(all);
  return all;
}

}  // namespace

void load_recordings(const std::string& path, const SampleFilter& filter, NameTable& names,
                     std::vector<Recording>& out, const SettleStacks& settle,
                     uint32_t first_index) {
  load_file(path, filter, names, out, settle, first_index, nullptr);
}

// Overlapping recordings are found once all are read (their times are
// known at their ends), then read again counting their common samples once.
std::vector<Recording> load_all(std::span<const std::string> paths, const SampleFilter& filter,
                                NameTable& names, const SettleStacks& settle,
                                uint32_t first_index) {
  std::vector<Recording> all = load_files(paths, filter, names, settle, first_index, nullptr);
  Overlaps overlaps = Overlaps::find(all);
  if (overlaps.empty())
    return all;
  all = {};  // let go before reading again: one copy under the memory budget
  all = load_files(paths, filter, names, settle, first_index, &overlaps);
  for (size_t i = 0; i < all.size(); ++i) {
    all[i].overlap = overlaps.description();
    all[i].shared_ns = overlaps.shared_ns(i);
  }
  return all;
}

}  // namespace ebprof::report
