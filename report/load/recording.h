#pragma once

// The load stage: a recording file read into plain structs, its samples
// counted by key as they stream past, so memory grows with distinct keys,
// not with the recording's length.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/elf_file.h"
#include "format/recording.h"
#include "report/load/id_runs.h"
#include "report/load/sample_filter.h"
#include "report/model/facts.h"
#include "report/model/profile.h"

namespace ebprof::report {

// Symbol tables embedded by recorders, by raw build-id: one map for every
// recording of a report, since a build-id names the same binary anywhere.
using EmbeddedTables = std::unordered_map<std::string, ElfSymbolTable>;

// The report-wide table of the names SampleKey::comm and SampleKey::cgroup
// index: comms and cgroup paths. Index 0 is "": what a field the report
// does not keep apart (Grouping) reads as.
class NameTable {
 public:
  NameTable() { intern(""); }
  uint32_t intern(const std::string& name);
  const std::vector<std::string>& all() const { return names_; }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> index_;
};

// What a report calls the cgroup of a sample: its path, or its id where
// the recorder could not read the path.
std::string cgroup_name(const format::Cgroup& cgroup);

// The comm of a sample whose comm was defined in a damaged frame.
inline const std::string kLostComm = "[lost]";

// One recording (one source of a merged file): its tables, and its samples
// counted by key.
struct Recording {
  uint32_t index = 0;     // in the report: SampleKey::stack.source
  std::string path;       // the file it was read from
  format::Source source;  // in a merged file, which input it was (else no path)
  format::RecordingInfo info;
  std::vector<format::KernelSymbol> kernel_symbols;  // ascending address
  std::shared_ptr<const EmbeddedTables> embedded_symbols = std::make_shared<EmbeddedTables>();
  // JIT symbols from processes' perf maps, by pid, sorted by address.
  std::unordered_map<uint32_t, std::vector<ElfSymbol>> jit_symbols;
  // Every maps capture of each pid, oldest first, mappings sorted by start.
  std::unordered_map<uint32_t, std::vector<format::ProcessInfo>> processes;
  // By id. An id a sample uses but these lack was defined in a damaged frame
  // the reader skipped (ids jump past it): keyed storage means a jump costs
  // nothing, however far a damaged file makes it.
  IdRuns<format::Stack> stacks;
  // --call-graph dwarf: the user stack windows by id (once settled, only
  // those later samples may still use), and the blocks they are made of (a
  // block a damaged frame lost is in none: a window then reads short).
  IdRuns<format::UserWindow> windows;
  BlockRuns blocks;
  // ELF files' call frame information the recorder embedded, by raw
  // build-id (all sources of a file share them, like embedded symbols).
  std::shared_ptr<const std::unordered_map<std::string, format::ElfCfi>> embedded_cfi =
      std::make_shared<std::unordered_map<std::string, format::ElfCfi>>();
  // Each distinct key of the samples the filter kept, in order of first
  // appearance, and what they add up to.
  std::vector<std::pair<SampleKey, SampleValues>> counts;
  uint64_t total_samples = 0;     // counted: what the sample filter kept
  uint64_t recorded_samples = 0;  // in the file, of what the view shows
  uint64_t idle_samples = 0;      // of those, the idle task's the filter left out
  // What --view leaves out: samples on CPU, intervals off it.
  uint64_t unviewed_samples = 0, unviewed_intervals = 0;
  uint64_t last_sample_ns = 0;
  std::optional<format::RecordingEnd> end;   // missing when the recorder was killed
  std::vector<format::Losses> loss_reports;  // in time order: losses per CPU over time
  std::string warning;                       // set when the file ended early or is damaged

  std::vector<FileSection> sections;  // what the file is made of, for `info`
  uint16_t version_major = 0, version_minor = 0;
};

// --call-graph dwarf: turns each of `refs` (ref.window set; its window in
// `windows`) into the ref that stands for it: samples that unwind alike
// then count as one key, and their windows can be let go as the file
// streams.
using SettleWindows = std::function<void(
    const Recording&, const IdRuns<format::UserWindow>& windows, std::span<StackRef> refs)>;

// What later stages do while the file is still being read. The recording
// is not complete yet (embedded tables, later frames) when they are called.
struct LoadHooks {
  // Told of each stack (its frame-pointer chain: ref.window unset) the
  // first time a kept sample of the batch that defines it uses it: for
  // later stages to start early on what they will need.
  std::function<void(const Recording&, const StackRef&)> stack_seen;
  // Called once the maps captures a batch's samples may need have been
  // read; windows no later sample can use are then let go (in a recording
  // that says how far back samples reach). Without it, samples keep their
  // own windows and every window is kept.
  SettleWindows settle_windows;
};

// Reads the recording at `path`, counting the samples `filter` keeps: one
// recording, or one per input of a file `ebprof-report merge` wrote,
// appended to `out` with the next indexes. Comms and cgroup paths go into `names`. Throws
// Error when the file cannot be read at all.
void load_recordings(const std::string& path, const SampleFilter& filter, NameTable& names,
                     std::vector<Recording>& out, const LoadHooks& hooks = {});

// Every source of every input, in order, sharing one embedded-symbol map
// (two recordings of one binary embed the symbols each sampled).
std::vector<Recording> load_all(std::span<const std::string> paths, const SampleFilter& filter,
                                NameTable& names, const LoadHooks& hooks = {});

// The windows a batch whose first window id is `first` may use: of
// `info`'s recording, the ids from the returned one on.
uint32_t first_window_reached(const format::RecordingInfo& info, uint64_t first);

// Settles the windowed keys of `keyed` (pairs whose .first is a SampleKey)
// with `settle`: their stacks become the refs that stand for them.
template <typename Keyed>
void settle_keys(const SettleWindows& settle, const Recording& recording,
                 const IdRuns<format::UserWindow>& windows, Keyed& keyed) {
  std::vector<StackRef> refs;
  for (const auto& k : keyed)
    if (k.first.stack.window != kNoWindow)
      refs.push_back(k.first.stack);
  settle(recording, windows, refs);
  auto settled = refs.begin();
  for (auto& k : keyed)
    if (k.first.stack.window != kNoWindow)
      k.first.stack = *settled++;
}

// The index of the latest capture of `pid` taken at or before `time_ns`
// (the first one when all are later): the maps in effect for a sample.
uint32_t capture_at(const Recording& recording, uint32_t pid, uint64_t time_ns);

// The captures of `ref`'s process from the one in effect on: what its
// addresses are looked up in (empty when the process was never captured).
std::span<const format::ProcessInfo> captures_from(const Recording& recording, const StackRef& ref);

// The mapping holding `address` in the first of `captures` that maps it: the
// capture in effect at a sample's time, then later ones (code mapped after
// that capture: start-up libraries, dlopen).
const format::Mapping* find_mapping(std::span<const format::ProcessInfo> captures,
                                    uint64_t address);

// What the recording's samples say a thread was doing.
ThreadState thread_state(const format::Sample& s);

}  // namespace ebprof::report
