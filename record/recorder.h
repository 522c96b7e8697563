#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>

#include "format/writer.h"
#include "record/cfi_embedder.h"
#include "record/cgroup_paths.h"
#include "record/kallsyms.h"
#include "record/leaf_repair.h"
#include "record/loss_ledger.h"
#include "record/process_tracker.h"
#include "record/python_processes.h"
#include "record/sample_decoder.h"
#include "record/stack_interner.h"
#include "record/stack_windows.h"
#include "record/symbol_embedder.h"

struct ebprof_code_key;

namespace ebprof::record {

struct RecorderStats {
  uint64_t samples = 0;
  uint64_t off_cpu = 0;   // of them, intervals off CPU
  uint64_t embed_ns = 0;  // time spent finding symbols to embed, tables read included
  // Frame-pointer mode: samples whose record carried a copy of the user
  // stack, for the leaf repair. What BPF's frameless_code saves.
  uint64_t stack_copies = 0;
};

// Turns ring-buffer records into frames: interns stacks, comms and cgroups, captures
// process maps on first sight, collects the kernel and user symbols new
// stacks need, and writes samples in batches, each after those symbols. A batch is
// written when it is full or a second old, which bounds both memory and what
// a killed recorder can lose.
class Recorder {
 public:
  static constexpr size_t kMaxBatchSamples = 16384;
  static constexpr uint64_t kMaxBatchAgeNs = 1'000'000'000;

  // `embedder` is empty when symbol tables are not to be embedded (nor,
  // with `call_graph` dwarf, unwinding tables). The writer, tracker and
  // ledger outlive the recorder; a record that does not decode is counted
  // in `ledger`.
  Recorder(format::RecordingWriter& writer, KernelSymbolIndex kernel_symbols,
           ProcessTracker& tracker, std::optional<SymbolEmbedder> embedder, LossLedger& ledger,
           format::CallGraph call_graph = format::CallGraph::kFramePointer);

  // Reads the frames of the CPython processes it samples from now on,
  // putting each into BPF's map with `publish`.
  void read_python(PythonProcesses::Publish publish) { python_.emplace(std::move(publish)); }
  // Frame-pointer mode: answers BPF's questions about which code needs its
  // stack copied for the leaf repair (EBPROF_CODE_UNKNOWN) with `publish`.
  using PublishFramelessCode = std::function<void(const ebprof_code_key&, uint64_t granules)>;
  void answer_code_questions(PublishFramelessCode publish) {
    publish_frameless_code_ = std::move(publish);
  }

  void on_record(std::span<const std::byte> record);
  // Takes in the side-band events that arrived so far; best called right
  // before the samples they precede are handed to on_record().
  void refresh_processes() { tracker_.refill(); }
  // Writes the pending batch if it is full or old enough (or if `force`).
  void flush(uint64_t now_ns, bool force = false);
  // At the end: JIT code found unnamed, looked up again in the perf maps of
  // the processes that ran it (some runtimes write theirs as they exit).
  void name_missed_jit();
  // The writer has a new file (--switch-output), the last one's batch
  // flushed: ids start from 0 again, and the maps, symbols and CFI the new
  // file's samples need are written into it as if none had been.
  void start_file();

  const RecorderStats& stats() const { return stats_; }
  // Writes a Losses frame with what the ledger counted since the last
  // one, if anything.
  void write_losses(uint64_t now_ns);
  // Stacks written: each batch defines those it uses, so a stack sampled in
  // several batches counts once in each.
  uint64_t stack_count() const { return stacks_in_earlier_files_ + interner_.size(); }
  // --call-graph dwarf: distinct windows, and the bytes their blocks hold.
  uint32_t window_count() const { return windows_ ? windows_->windows() : 0; }
  uint64_t window_bytes() const { return windows_ ? windows_->distinct_bytes() : 0; }
  size_t embedded_binaries() const { return embedder_ ? embedder_->binaries() : 0; }
  // CPython processes whose frames were read.
  size_t python_processes() const { return python_ ? python_->found() : 0; }

 private:
  // The symbols, CFI and code objects the next batch needs, written before it.
  void write_names();
  uint32_t intern_comm(std::string_view comm);
  // The index of cgroup `id` in the batch under way, or kNoCgroup.
  uint32_t intern_cgroup(uint64_t id);
  // The record's stack id, new stacks, kernel symbols and process maps
  // written down on the way.
  uint32_t intern_stack(const RawSample& s);
  // Its window's id (--call-graph dwarf), or kNoWindow.
  // What a sample's user stack is read from: its registers and its copy
  // of the stack.
  struct UserContext {
    format::UserAbi abi = format::UserAbi::kUnknown;
    std::span<const uint64_t> regs;
    std::span<const std::byte> stack;
  };
  uint32_t intern_window(uint32_t pid, const UserContext& user);
  // A switch window, kept until its interval's record comes: only then is
  // it known to be wanted (an interval may be too short to record).
  void keep_switch_window(const RawSample& s);
  // The user stack to intern for `s`: with frame pointers, the caller of
  // a leaf without one put in. Sets `window` to the sample's window.
  std::span<const uint64_t> user_stack(RawSample& s, uint32_t& window);
  // Tells BPF, where `s` asked (EBPROF_CODE_UNKNOWN), whether samples in
  // the code region at its user rip need their stack copied, once the
  // region's mapping is known.
  void answer_code_question(const RawSample& s);

  format::RecordingWriter& writer_;
  ProcessTracker& tracker_;
  LossLedger& ledger_;
  StackInterner interner_;
  KernelSymbolIndex kernel_symbols_;
  // Where off-CPU and waker stacks start, once the tracing glue is cut.
  std::optional<format::KernelSymbol> schedule_;
  std::optional<format::KernelSymbol> try_to_wake_up_;
  std::optional<SymbolEmbedder> embedder_;
  std::optional<StackWindows> windows_;    // --call-graph dwarf
  std::optional<CfiEmbedder> cfi_;         // --call-graph dwarf, embedding
  std::optional<LeafRepair> leaf_repair_;  // frame-pointer mode
  std::optional<PythonProcesses> python_;
  PublishFramelessCode publish_frameless_code_;
  // Switch windows whose interval has not come, by tid: when the thread
  // left, and its registers and stack.
  struct SwitchWindow {
    uint64_t time_ns = 0;
    format::UserAbi abi = format::UserAbi::kUnknown;
    std::vector<uint64_t> regs;
    std::vector<std::byte> stack;
    std::vector<uint64_t> python;  // the thread's Python frames as it left
    format::PythonEnd python_end = format::PythonEnd::kNone;
  };
  static constexpr size_t kMaxSwitchWindows = 1 << 16;
  std::unordered_map<uint32_t, SwitchWindow> switch_windows_;
  std::vector<format::KernelSymbol> pending_kernel_symbols_;
  std::unordered_map<std::string, uint32_t> comm_ids_;  // of the batch under way
  uint32_t comms_defined_ = 0;                          // comm ids given out
  CgroupPaths cgroup_paths_;
  std::unordered_map<uint64_t, uint32_t> cgroup_indexes_;  // of the batch under way
  format::SampleBatch batch_;
  // Intervals of this batch whose waker's record is still to come, by tid.
  std::unordered_map<uint32_t, size_t> awaiting_waker_;
  uint64_t batch_started_ns_ = 0;
  uint64_t stacks_in_earlier_files_ = 0;
  RecorderStats stats_;
};

}  // namespace ebprof::record
