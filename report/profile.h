#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/elf_file.h"
#include "format/recording.h"
#include "report/sample_filter.h"

namespace ebprof::report {

using EmbeddedTables = std::unordered_map<std::string, ElfSymbolTable>;

// StackCount::off_cpu of samples on CPU.
inline constexpr uint8_t kOnCpu = 0xff;

// What --view (in `filter`) shows; without one, what the recording holds:
// samples on CPU, or intervals off CPU for --off-cpu-only.
View view_of(const SampleFilter* filter, const format::RecordingInfo& info);
inline bool in_view(View view, const format::Sample& s) {
  return view == View::kWall || (view == View::kOnCpu) == (s.blocked_ns == 0);
}

// What a thread was doing: "on CPU", or why it was off it (--off-cpu):
// "R preempted", "S sleeping", "D uninterruptible", "I idle", "other".
const char* state_name(uint8_t off_cpu);

// Samples with the same process, thread, CPU, maps capture, comm and stack,
// counted together.
struct StackCount {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint16_t cpu = 0;
  uint32_t capture = 0;  // index into Profile::processes[pid]: the capture in effect
  uint32_t comm_id = 0;
  uint32_t stack_id = 0;
  uint8_t off_cpu = kOnCpu;  // kOnCpu, or the format::BlockState of intervals off CPU
  // Off CPU with --wakers: who woke the thread (waker_stack_id kNoWaker: unknown).
  uint32_t waker_pid = 0;
  uint32_t waker_capture = 0;
  uint32_t waker_comm_id = 0;
  uint32_t waker_stack_id = format::kNoWaker;
  uint64_t count = 0;    // samples, or intervals off CPU
  uint64_t time_ns = 0;  // what they stand for: sample periods, or time off CPU
};

// A recording reduced to what reports need: tables plus per-stack counts.
// Samples are aggregated while streaming, so memory grows with distinct
// stacks, not with recording length.
struct Profile {
  std::string path;       // the file it was read from
  format::Source source;  // in a merged file, which input it was (else index 0, no path)
  format::RecordingInfo info;
  std::vector<format::KernelSymbol> kernel_symbols;
  // Symbol tables embedded by the recorder (all its frames for one build-id
  // merged), by raw build-id: one map shared by every profile of a report,
  // since a build-id names the same binary in any recording.
  std::shared_ptr<const EmbeddedTables> embedded_symbols = std::make_shared<EmbeddedTables>();
  // JIT symbols from processes' perf maps, by pid, sorted by address.
  std::unordered_map<uint32_t, std::vector<ElfSymbol>> jit_symbols;
  // Every maps capture of each pid, oldest first, mappings sorted by start.
  std::unordered_map<uint32_t, std::vector<format::ProcessInfo>> processes;
  // By id. An id a sample uses but these lack was defined in a damaged frame
  // the reader skipped (ids jump past it): keyed storage means a jump costs
  // nothing, however far a damaged file makes it.
  std::unordered_map<uint32_t, format::Stack> stacks;
  std::unordered_map<uint32_t, std::string> comms;
  std::vector<StackCount> counts;
  uint64_t total_samples = 0;     // counted: what the sample filter kept
  uint64_t recorded_samples = 0;  // in the file, of what --view shows
  uint64_t last_sample_ns = 0;
  std::optional<format::RecordingEnd> end;   // missing when the recorder was killed
  std::vector<format::Losses> loss_reports;  // in time order: losses per CPU over time
  std::string warning;                       // set when the file ended early or is damaged

  // What the file is made of, for `info`.
  struct Section {
    std::string kind;
    uint64_t frames = 0, stored_bytes = 0, raw_bytes = 0;
  };
  std::vector<Section> sections;  // in order of first appearance
  uint16_t version_major = 0, version_minor = 0;
};

// The comm of a sample whose comm was defined in a damaged frame.
inline const std::string kLostComm = "[lost]";

// Reads the recording at `path`, counting the samples `filter` keeps (all
// of them without one): one profile for a recording, one per input for a
// file `ebprof-report merge` wrote. Throws Error when the file cannot be
// read at all.
std::vector<Profile> load_profiles(const std::string& path, const SampleFilter* filter = nullptr);
// The one profile of a recording; throws Error for a merged file.
Profile load_profile(const std::string& path, const SampleFilter* filter = nullptr);

// Gives all `profiles` one embedded-symbol map, the union of theirs: two
// recordings of one binary embed the symbols each sampled.
void share_embedded_symbols(std::span<Profile> profiles);

// What a report over several profiles (several -i, a merged file) says in
// its header: the first one's event and host (other hosts appended), their
// samples, durations and losses added up. Tables and counts stay empty.
Profile summary_of(std::span<const Profile> profiles);

// The index of the latest capture of `pid` taken at or before `time_ns`
// (the first one when all are later): the maps in effect for a sample.
uint32_t capture_at(const Profile& profile, uint32_t pid, uint64_t time_ns);

// The mapping holding `address` in the first of `captures` that maps it: the
// capture in effect at a sample's time, then later ones (code mapped after
// that capture: start-up libraries, dlopen).
const format::Mapping* find_mapping(std::span<const format::ProcessInfo> captures,
                                    uint64_t address);

// Seconds from the start of recording to its end (or its last sample, when
// the end frame is missing).
double duration_s(const Profile& profile);

// Whether `event` counts time (cpu-clock, task-clock): in nanoseconds.
bool is_clock_event(const std::string& event);

// What one sample stands for in its event's unit: the period (-c, or 1 for
// a probe or tracepoint), or for a clock event at -F the nanoseconds
// between samples; 0 when unknown (another event at -F, whose period the
// kernel adapts sample by sample).
uint64_t sample_weight(const format::RecordingInfo& info);

// "at 99 Hz" or "every 1000 events", from the recording's header.
std::string describe_rate(const format::RecordingInfo& info);

// Losses by cause over the whole recording: the end frame's totals, or the
// sum of the loss reports when the recorder was killed.
std::vector<format::LossCount> loss_totals(const Profile& profile);

// "0", or the total with its causes: "12 (buffer full: 12)": of samples
// dropped, or with `sample_kept`, of samples written with partial stacks.
std::string describe_losses(const Profile& profile, bool sample_kept = false);

// Where and when samples were dropped: "cpu 0: 5, cpu 1: 7; reported from
// 1.20 s to 3.41 s", or "" when none were or the file predates loss reports.
std::string describe_loss_spread(const Profile& profile);

}  // namespace ebprof::report
