#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "format/contents.h"
#include "record/process_source.h"
#include "record/task_events.h"

namespace ebprof::record {

// Knows the executable mappings of every process at the time of each sample,
// and decides when a process's maps must be written: on its first sample,
// and on its first sample after they changed.
//
// The knowledge comes from the kernel's side-band events (exec, mmap, fork,
// exit), applied in time order as samples' times pass them, on top of a
// /proc snapshot seeded at start: this is what names the frames of a
// process that lived a few milliseconds. Without side-band events (or after
// the kernel dropped some), /proc is read instead: on first sight, and again
// when a new stack holds an address outside every known mapping, at least
// kRereadIntervalNs apart, so that a process full of JIT code or an address
// that never resolves cannot turn every sample into a /proc read.
class ProcessTracker {
 public:
  static constexpr uint64_t kRereadIntervalNs = 100'000'000;
  // How long an exited process's maps stay known: samples taken before the
  // exit can still be in the ring buffer.
  static constexpr uint64_t kKeepExitedNs = 5'000'000'000;
  // How often processes not known to have exited are checked for: an exit
  // the events did not tell (the kernel dropped them, there are none, or
  // the leader was sampled on its way out, which counts as alive) must not
  // keep a process's maps for the rest of a week-long recording.
  static constexpr uint64_t kSweepIntervalNs = 10'000'000'000;

  // `source` outlives the tracker.
  explicit ProcessTracker(ProcessSource& source) : source_(&source) {}

  // A process's state when recording starts (from /proc).
  void seed(format::ProcessInfo info);

  // Brings what it knows of `pid` up to `time_ns`, a sample's time, before
  // the sample's words are looked up in its maps (the leaf repair, the
  // symbols of copied stacks): the side band is drained again when the
  // process, or the address `leaf` it ran at, is not known yet, as for a
  // process that exec'd and mapped its libraries since the last drain.
  void catch_up(uint32_t pid, uint64_t leaf, uint64_t time_ns);

  // Returns what to write to the recording, if anything. The common case, a
  // known stack of a process whose maps did not change, costs one hash lookup.
  std::optional<format::ProcessInfo> observe(uint32_t pid, std::span<const uint64_t> user,
                                             bool new_stack, uint64_t time_ns);

  // Pulls in new side-band events.
  void refill();
  // Applies the events up to `time_ns` and forgets processes that exited
  // long before it, or that are no longer there.
  void advance(uint64_t time_ns);

  // Every process's maps are to be written again on its next sample: a new
  // file (--switch-output) holds the maps of the processes it samples.
  void forget_written() {
    for (auto& [pid, p] : processes_)
      p.dirty = true;
  }
  // Processes whose maps were written.
  size_t process_count() const { return written_; }
  // Side-band records the kernel dropped (its ring was full).
  uint64_t lost_events() const { return lost_events_; }
  // The mapping of `pid`'s current maps that holds `ip`, if any.
  const format::Mapping* mapping_at(uint32_t pid, uint64_t ip) const;
  // Where `pid` lives, if it is known.
  const format::ProcessPlace* place(uint32_t pid) const;

 private:
  struct Process {
    std::string comm;
    std::vector<format::Mapping> mappings;  // ascending, non-overlapping
    std::string maps_error;
    format::ProcessPlace place;
    uint64_t changed_at_ns = 0;
    uint64_t written_at_ns = 0;  // capturedAtNs of the last capture written
    uint64_t exited_at_ns = 0;
    uint64_t read_at_ns = 0;  // last /proc read
    bool read_once = false;   // read_at_ns is set
    bool dirty = true;        // changed since last written
    bool ever_written = false;
    bool recheck = false;  // a stack had an address outside `mappings`
  };

  void apply_until(uint64_t time_ns);
  void apply(const TaskEvent& e);
  void read_proc(uint32_t pid, Process& p, uint64_t now_ns);
  bool maps_all(const Process& p, std::span<const uint64_t> user) const;
  format::ProcessInfo capture(uint32_t pid, Process& p);

  ProcessSource* source_;
  std::unordered_map<uint32_t, Process> processes_;
  std::vector<TaskEvent> queue_;  // by time; queue_[head_] is the next to apply
  size_t head_ = 0;
  uint64_t swept_at_ns_ = 0;
  size_t written_ = 0;
  uint64_t lost_events_ = 0;
};

// Puts `m` into `mappings` (ascending, non-overlapping), cutting away what it
// overlaps, as a new mmap replaces what was mapped there.
void insert_mapping(std::vector<format::Mapping>& mappings, format::Mapping m);

}  // namespace ebprof::record
