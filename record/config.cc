#include "record/config.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "common/error.h"
#include "record/child_process.h"
#include "record/leaf_repair.h"
#include "record/off_cpu.h"
#include "record/perf_events.h"
#include "record/probe_events.h"
#include "record/targets.h"

namespace ebprof::record {
namespace {

void check_off_cpu_options(const RecordOptions& o) {
  const bool off_cpu = o.off_cpu || o.off_cpu_only;
  if (!off_cpu &&
      (o.min_block_us != 1 || o.max_block_us || o.states != "all" || o.user_threads_only ||
       o.kernel_threads_only || o.off_cpu_hook != "auto" || o.wakers))
    throw Error(
        "--min-block, --max-block, --state, --user-threads-only, --kernel-threads-only, "
        "--wakers and --off-cpu-hook shape --off-cpu: add --off-cpu");
  if (o.off_cpu_only && (o.event != "cpu-clock" || o.period || o.frequency != 99))
    throw Error(
        "--off-cpu-only takes no samples: -e, -F and -c do not apply (use --off-cpu "
        "to sample too)");
  if (o.min_block_us == 0)
    throw Error("--min-block must be at least 1 microsecond");
  if (o.max_block_us && o.max_block_us < o.min_block_us)
    throw Error("--max-block " + std::to_string(o.max_block_us) + " is below --min-block " +
                std::to_string(o.min_block_us) + ": no interval could be recorded");
  if (off_cpu)
    parse_block_states(o.states);
}

std::optional<Sampling> sampling(const RecordOptions& o) {
  if (o.off_cpu_only)
    return std::nullopt;
  EventSpec event = find_event(o.event);
  // A probe or tracepoint gives a stack on every hit.
  if (event.kind != EventSpec::Kind::kPerf && (o.frequency_given || o.period))
    std::fprintf(stderr,
                 "ebprof-record: warning: %s gives a stack on every hit: %s does not apply\n",
                 o.event.c_str(), o.period ? "-c" : "-F");
  const SamplingRate rate = event.kind != EventSpec::Kind::kPerf ? SamplingRate{0, 1}
                            : o.period                           ? SamplingRate{0, o.period}
                                                                 : SamplingRate{o.frequency, 0};
  return Sampling{std::move(event), rate};
}

std::optional<OffCpuConfig> off_cpu_config(const RecordOptions& o) {
  if (!o.off_cpu && !o.off_cpu_only)
    return std::nullopt;  // check_options() refused shaping options without it
  OffCpuConfig c;
  c.hook = o.off_cpu_hook == "auto" ? probe_switch_hook() : parse_switch_hook(o.off_cpu_hook);
  if (!switch_hook_attaches(c.hook))
    throw Error("--off-cpu-hook " + o.off_cpu_hook +
                ": this kernel does not attach it; use --off-cpu-hook auto");
  if (c.hook == SwitchHook::kTracepoint)
    tracefs();  // libbpf attaches tracepoints through it
  c.min_block_ns = o.min_block_us * 1000;
  c.max_block_ns = o.max_block_us * 1000;
  c.states = parse_block_states(o.states);
  c.threads = o.user_threads_only     ? ThreadKinds::kUser
              : o.kernel_threads_only ? ThreadKinds::kKernel
                                      : ThreadKinds::kAll;
  c.wakers = o.wakers;
  return c;
}

Transport choose_transport(const std::string& name) {
  if (name == "ringbuf")
    return Transport::kRingBuffer;
  if (name == "perfbuf")
    return Transport::kPerfBuffers;
  return probe_transport();
}

}  // namespace

void check_options(const RecordOptions& o) {
  if (o.frequency == 0)
    throw Error("-F must be at least 1 Hz");
  std::filesystem::path dir = std::filesystem::path(o.output).parent_path();
  if (dir.empty())
    dir = ".";
  if (access(dir.c_str(), W_OK) != 0)
    throw Error(errno_message("cannot write to directory " + dir.string(), errno) +
                ": choose a writable path with -o");
  if (o.duration_s < 0)
    throw Error("--duration must not be negative");
  if (o.mmap_pages && !std::has_single_bit(o.mmap_pages))
    throw Error("-m " + std::to_string(o.mmap_pages) + " is not a power of two: try " +
                std::to_string(std::bit_ceil(o.mmap_pages)));
  check_off_cpu_options(o);
  if (!o.tids.empty() && (!o.pids.empty() || !o.command.empty()))
    throw Error("-t picks threads on its own: give it without -p or a command");
}

Targets resolve_targets(const RecordOptions& o) {
  // Before anything is loaded or any file touched: a mistyped command must
  // not cost the previous recording its name.
  if (!o.command.empty())
    check_runnable(o.command);
  Targets t;
  t.pids = resolve_pids(o.pids);
  t.tids = check_tids(o.tids);
  t.cgroup = open_cgroup(o.cgroup);
  t.cpus = select_cpus(o.cpu_list);
  t.tasks = !t.tids.empty()                                          ? TaskFilter::kThreads
            : !t.pids.empty() || (!o.command.empty() && !o.all_cpus) ? TaskFilter::kProcesses
                                                                     : TaskFilter::kAll;
  return t;
}

SamplerConfig sampler_config(const RecordOptions& o, const Targets& t) {
  SamplerConfig c{.sampling = sampling(o),
                  .off_cpu = off_cpu_config(o),
                  .cpus = t.cpus,
                  .tasks = t.tasks,
                  .cgroup_fd = t.cgroup.get(),
                  .transport = choose_transport(o.transport)};
  // perf opens a command's or -p's events per task; -C asks for CPUs.
  c.per_task = c.sampling && samples_per_task(c.sampling->event) &&
               t.tasks == TaskFilter::kProcesses && o.cpu_list.empty();
  c.user_stack_bytes = o.call_graph == format::CallGraph::kDwarf
                           ? std::min(o.user_stack_bytes, max_user_stack_bytes(c.transport))
                           : kLeafWindowBytes;
  c.stack_for_frameless_only = o.call_graph != format::CallGraph::kDwarf;
  c.pages_per_cpu = o.mmap_pages
                        ? o.mmap_pages
                        : pages_per_cpu_for(c.sampling ? c.sampling->rate : SamplingRate{99, 0},
                                            t.cpus.size(), c.user_stack_bytes);
  return c;
}

}  // namespace ebprof::record
