#pragma once

// The load stage's product: one recording read into plain structs, its
// samples counted by key, so that memory grows with distinct keys, not
// with the recording's length.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/elf_file.h"
#include "format/contents.h"
#include "report/load/id_runs.h"
#include "report/model/facts.h"
#include "report/model/process_maps.h"
#include "report/model/profile.h"

namespace ebprof::report {

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
  // CPython code objects the recorder read, by pid, then by address (a
  // few at one address: code freed and another made there).
  std::unordered_map<uint32_t, std::unordered_map<uint64_t, std::vector<format::CodeObject>>>
      python_code;
  ProcessMaps processes;
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
  // Its samples on CPU carry their periods (1.10): what each stands for,
  // for an event whose period the kernel adapts at -F.
  bool sample_periods = false;
  // Samples an earlier recording of the report held too (Overlaps), left
  // out, and what overlapped; "" when none did.
  uint64_t duplicate_samples = 0;
  std::string overlap;
  uint64_t shared_ns = 0;  // of its time, what earlier ones covered too
  // --time: the window's bounds on this recording's clock (CLOCK_MONOTONIC
  // ns), where it has them; the duration shown is what they leave.
  std::optional<uint64_t> window_start_ns, window_end_ns;
  std::optional<format::RecordingEnd> end;   // missing when the recorder was killed
  std::vector<format::Losses> loss_reports;  // in time order: losses per CPU over time
  std::string warning;                       // set when the file ended early or is damaged

  std::vector<FileSection> sections;  // what the file is made of, for `info`
  uint16_t version_major = 0, version_minor = 0;
};

// The captures of `ref`'s process from the one in effect at its sample on.
inline std::span<const format::ProcessInfo> captures_from(const Recording& recording,
                                                          const StackRef& ref) {
  return captures_from(recording.processes, ref.pid, ref.capture);
}

// What messages call a recording: its file, and in a merged file the input
// it came from ("host.data > web1.data"), as merge names them.
inline std::string recording_name(const Recording& recording) {
  return recording.source.path.empty() ? recording.path
                                       : recording.path + " > " + recording.source.path;
}

}  // namespace ebprof::report
