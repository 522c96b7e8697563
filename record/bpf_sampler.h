#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "bpf/profile.h"
#include "format/contents.h"
#include "record/off_cpu.h"
#include "record/perf_events.h"
#include "record/perf_ring.h"

struct profile_bpf;
struct bpf_link;
struct bpf_program;
struct ring_buffer;

namespace ebprof::record {

// How samples travel from BPF to the recorder.
enum class Transport {
  kRingBuffer,   // one BPF ring buffer shared by all CPUs (Linux 5.8+)
  kPerfBuffers,  // a perf buffer per CPU: what older kernels have
};

// The BPF ring buffer where the kernel has one, else perf buffers.
Transport probe_transport();
const char* transport_name(Transport t);  // "ringbuf" or "perfbuf", as --transport takes

// What to take stacks on: an event and how often.
struct Sampling {
  EventSpec event;
  SamplingRate rate;
};

// Which tasks BPF keeps, besides -C's CPUs and --cgroup.
enum class TaskFilter : uint8_t {
  kAll,
  kProcesses,  // the pids given to add_pid(), and their descendants
  kThreads,    // the threads given to add_tid()
};

// --user-threads-only, --kernel-threads-only.
enum class ThreadKinds : uint8_t { kAll, kUser, kKernel };

// --off-cpu: what to record of threads' time off CPU.
struct OffCpuConfig {
  SwitchHook hook = SwitchHook::kRawTracepoint;
  uint64_t min_block_ns = 1;
  uint64_t max_block_ns = 0;  // 0: no limit
  uint32_t states = 0x1f;     // bit per format::BlockState
  ThreadKinds threads = ThreadKinds::kAll;
  bool wakers = false;  // --wakers: who woke each interval's thread
};

struct SamplerConfig {
  std::optional<Sampling> sampling;     // none with --off-cpu-only
  std::optional<OffCpuConfig> off_cpu;  // none without --off-cpu
  std::vector<int> cpus;
  TaskFilter tasks = TaskFilter::kAll;
  int cgroup_fd = -1;  // an open cgroup v2 directory: only tasks in it and below
  // The event is opened on each target task (sample_task()), not on each
  // CPU: a command's or -p's events other than the CPU clock (samples_per_task).
  bool per_task = false;
  Transport transport = Transport::kRingBuffer;
  size_t pages_per_cpu = 0;  // buffer size, a power of two
  // User stack each record copies, with the registers: SIZE of --call-graph
  // dwarf (within the transport's limit), else what the leaf repair needs.
  uint32_t user_stack_bytes = 0;
  // Frame-pointer mode: the stack is copied only for samples in code the
  // recorder says is frameless (publish_frameless_code()) or knows nothing of.
  bool stack_for_frameless_only = false;
};

// Buffer size for a sampling rate, in pages per CPU: room for about a
// quarter of a second of samples of typical depth (and of
// `user_stack_bytes` of stack each). The reader drains the buffer every
// 20-100 ms and is woken when a quarter of it fills, so that is room for a
// reader that stalls briefly, and no more: the buffer is mapped into the
// recorder twice over (the ring's wrap-around), all of it resident once
// written, so a second's room cost the recorder four times the memory.
// With a period (-c) the rate is unknown; 1000 samples per second is
// assumed. The ring buffer, one for all `cpu_count` CPUs, stays within
// 1 GiB.
size_t pages_per_cpu_for(const SamplingRate& rate, size_t cpu_count, uint32_t user_stack_bytes = 0);

// The sample buffers' bytes, all CPUs': the ring's size, or the perf
// buffers' added up.
size_t buffer_bytes(const SamplerConfig& config);

// The most user stack a record can carry through `transport`: a perf-buffer
// record's size is a u16.
uint32_t max_user_stack_bytes(Transport transport);

// Owns the BPF side: opens, configures, loads and attaches the programs of
// bpf/ to the event (a sampling perf event on every CPU, a tracepoint or a
// probe) and to context switches, and reads their records from the ring
// buffer or the perf buffers. Everything it owns is released on any path,
// programs first.
class BpfSampler {
 public:
  using Handler = std::function<void(std::span<const std::byte> record)>;

  // Loads the programs and follows forks; samples nothing before start().
  // Throws Error naming what is missing (BTF, ring buffer, privileges).
  explicit BpfSampler(const SamplerConfig& config);
  ~BpfSampler();
  BpfSampler(const BpfSampler&) = delete;
  BpfSampler& operator=(const BpfSampler&) = delete;

  // Attaches the sampling and off-CPU programs: after the recorder's own
  // start (kallsyms, /proc), which every CPU's events at -F max slowed
  // several times over, each of its interrupts walking its stack.
  void start(const SamplerConfig& config);

  void add_pid(uint32_t pid);
  // Has BPF walk the CPython frames of process `pid` as `entry` says, or
  // no longer (null).
  void publish_python(uint32_t pid, const ebprof_python_proc* entry);
  // Answers a record's EBPROF_CODE_UNKNOWN: `granules` (bpf/profile.h)
  // are where the code of `key` needs its stack copied.
  void publish_frameless_code(const ebprof_code_key& key, uint64_t granules);
  void add_tid(uint32_t tid);
  // With SamplerConfig::per_task, samples the task `tid` and what it starts
  // from now on (with `on_exec`, from its next exec); a task that is gone
  // is passed over. Otherwise nothing.
  void sample_task(uint32_t tid, bool on_exec = false);

  // Waits up to timeout_ms for the buffers to fill past their wakeup mark.
  // A signal ends the wait early; that is not an error.
  void wait(int timeout_ms);
  // Hands the records available to `handler`, never waiting: the BPF
  // side wakes the reader only when a buffer is a quarter full, so what was
  // committed silently must be picked up on the reader's own schedule.
  // Returns after kConsumeBudgetNs with records left, true then, so that
  // a reader slower than the programs (at -F max) still gets to see a
  // stop. Rethrows what the handler threw.
  bool consume(const Handler& handler);
  static constexpr uint64_t kConsumeBudgetNs = 100'000'000;
  // Detaches every program: nothing more comes, and what the buffers hold
  // is a finite drain.
  void stop();

  // Samples lost (or damaged) in the kernel so far, by CPU and cause;
  // only nonzero counts.
  std::vector<format::LossCount> losses() const;

 private:
  struct SkelDelete {
    void operator()(profile_bpf* skel) const;
  };
  struct LinkDelete {
    void operator()(bpf_link* link) const;
  };
  struct RingDelete {
    void operator()(ring_buffer* ring) const;
  };
  static int on_record(void* ctx, void* data, size_t size);
  void configure(const SamplerConfig& config);
  void configure_off_cpu(const std::optional<OffCpuConfig>& config);
  void fill_filters(const SamplerConfig& config);
  void open_readers(const SamplerConfig& config);
  void attach(bpf_program* prog, const std::string& what);
  void attach_event(const SamplerConfig& config);
  void attach_off_cpu(const OffCpuConfig& config);
  // The perf-buffer transport: records are kept, then handed over sorted.
  void keep_raw(std::span<const std::byte> raw);
  void hand_over_in_time_order();

  const Handler* handler_ = nullptr;  // during consume()
  uint64_t consume_until_ns_ = 0;     // its budget
  uint32_t consumed_ = 0;
  // Keys publish_frameless_code() answered, which need no second answer
  // while BPF's map holds them: as many at most as it holds.
  struct CodeKeyHash {
    size_t operator()(const ebprof_code_key& k) const;
  };
  struct CodeKeyEqual {
    bool operator()(const ebprof_code_key& a, const ebprof_code_key& b) const;
  };
  std::unordered_set<ebprof_code_key, CodeKeyHash, CodeKeyEqual> answered_;
  // An exception thrown by the handler, held while libbpf (C) unwinds.
  std::exception_ptr handler_error_;
  // Destroyed in reverse order: programs are detached first, so none
  // writes into a reader that is gone, and the object goes last.
  std::unique_ptr<profile_bpf, SkelDelete> skel_;
  std::unique_ptr<ring_buffer, RingDelete> ring_;  // kRingBuffer
  std::unique_ptr<PerfRing> perf_ring_;            // kPerfBuffers
  std::vector<std::unique_ptr<bpf_link, LinkDelete>> links_;
  std::optional<Sampling> per_task_;   // what sample_task() opens
  std::vector<UniqueFd> task_events_;  // its perf events, the program attached to each
  struct Pending {
    uint64_t time_ns;
    size_t word;  // where in arena_
    size_t bytes;
  };
  std::vector<uint64_t> arena_;
  std::vector<Pending> pending_;
};

}  // namespace ebprof::record
