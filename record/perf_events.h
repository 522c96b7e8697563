#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/unique_fd.h"

namespace ebprof::record {

// CPUs in a kernel CPU list such as "0-3,8,10-11" (as in
// /sys/devices/system/cpu/online and perf's -C). Throws Error when malformed.
std::vector<int> parse_cpu_list(std::string_view list);

std::vector<int> online_cpus();

// The CPUs of a -C list, checked against the online ones; every online CPU
// when `list` is empty. Throws Error naming a CPU that is not online.
std::vector<int> select_cpus(const std::string& list);

// What to take a stack on, by the name `perf list` gives it.
struct EventSpec {
  enum class Kind {
    kPerf,        // a software or hardware perf event, sampled at a rate
    kTracepoint,  // every hit of tracepoint `group`:`target`
    kUprobe,      // every call of function `target` in the ELF file `group`
    kKprobe,      // every call of kernel function `target`
  };
  Kind kind = Kind::kPerf;
  std::string name;   // as given to -e
  uint32_t type = 0;  // kPerf: PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE
  uint64_t config = 0;
  std::string group;   // tracepoint category, or uprobe binary (absolute path)
  std::string target;  // tracepoint name, or probed function
  // kPerf, perf's modifiers: :u counts user mode only, :k the kernel only.
  bool exclude_user = false, exclude_kernel = false;
};

// kernel.perf_event_max_sample_rate: what -F max asks for (1000 where
// it cannot be read).
uint64_t max_sample_rate();

// The event called `name`: perf's names and aliases (cpu-clock, page-faults
// or faults, cycles, ...) with perf's :u, :k or :uk, tracepoint:CATEGORY:NAME
// (or CATEGORY:NAME, as perf takes it), uprobe:PATH:SYMBOL, kprobe:SYMBOL. Probes and tracepoints
// are checked against this kernel and machine. Throws Error naming what is
// available instead.
EventSpec find_event(const std::string& name);

// How often to sample: exactly one of the two is set (-F or -c).
struct SamplingRate {
  uint64_t frequency = 0;  // samples per second per CPU
  uint64_t period = 0;     // one sample every `period` events
};

struct PerfEvent {
  int cpu = -1;
  UniqueFd fd;
};

// Whether `event` is sampled per task for a command or -p, as perf does:
// an event other than the CPU clock, opened on each CPU, is shared by every
// process there, and at a frequency its period follows their rate, so a
// target's own page faults or switches are seldom or never sampled. The
// CPU clock fires on time whoever runs.
bool samples_per_task(const EventSpec& event);

// Opens `event` sampling at `rate` on the task `tid` and, inherited, on the
// threads and processes it starts from now on; with `on_exec`, only from
// its next exec (a command's child, which is still the recorder until it
// execs, as perf's enable_on_exec). nullopt when the task is gone. Throws
// Error as open_sampling_events does.
std::optional<PerfEvent> open_task_event(const EventSpec& event, const SamplingRate& rate,
                                         uint32_t tid, bool on_exec);

// Opens `event` sampling at `rate` on each of `cpus`, skipping CPUs that
// went offline. Throws Error with the cause and the fix (privileges, no PMU
// for a hardware event, perf_event_max_sample_rate) when none can be opened.
std::vector<PerfEvent> open_sampling_events(const EventSpec& event, const SamplingRate& rate,
                                            const std::vector<int>& cpus);

}  // namespace ebprof::record
