#include "record/session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "common/error.h"
#include "format/writer.h"
#include "record/bpf_sampler.h"
#include "record/child_process.h"
#include "record/host_info.h"
#include "record/kallsyms.h"
#include "record/perf_events.h"
#include "record/privileges.h"
#include "record/probe_events.h"
#include "record/proc_maps.h"
#include "record/recorder.h"
#include "record/side_band.h"
#include "record/status_line.h"
#include "record/targets.h"

namespace ebprof::record {
namespace {

volatile sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int sig) {
  g_stop_signal = sig;
}

// While recording, SIGINT/SIGTERM ask for a clean stop (no SA_RESTART: the
// signal must interrupt the ring-buffer wait). Once stopping, the defaults
// are back, so a second Ctrl-C ends a slow shutdown at once; the file is
// still readable up to its last frame.
void set_stop_handlers(void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// Samples dropped (`kept` false) or written with part of their stack
// missing (`kept` true).
uint64_t total_lost(const std::vector<format::LossCount>& losses, bool kept = false) {
  uint64_t lost = 0;
  for (const auto& l : losses)
    lost += l.sample_kept == kept ? l.count : 0;
  return lost;
}

bool process_exists(uint32_t pid) {
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// Everything that can be checked before BPF is loaded, so a typo costs
// nothing and leaves no partial file behind.
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
  // --off-cpu's shaping options, before anything slow starts.
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

Transport choose_transport(const std::string& name) {
  if (name == "ringbuf")
    return Transport::kRingBuffer;
  if (name == "perfbuf")
    return Transport::kPerfBuffers;
  return probe_transport();
}

// The kernel's mapping events, if it will give them; without them a process
// that exits before its first sample is read shows no names.
std::optional<SideBand> open_side_band() {
  try {
    return std::optional<SideBand>(std::in_place, online_cpus());
  } catch (const Error& e) {
    if (e.code() == EPERM || e.code() == EACCES)
      throw missing_privileges("opening mapping events");
    std::fprintf(stderr,
                 "ebprof-record: warning: no mapping events (%s): processes that exit quickly "
                 "may show unnamed frames\n",
                 e.what());
    return std::nullopt;
  }
}

// Like perf: an existing recording is kept as FILE.old rather than lost.
void keep_previous(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      rename(path.c_str(), (path + ".old").c_str()) != 0)
    throw_errno("cannot move the existing " + path + " to " + path + ".old", errno);
}

// kallsyms, or nothing when kptr_restrict hides its addresses: then `info`
// says so, and the module names and build-ids are still recorded.
KernelSymbolIndex kernel_symbols(format::RecordingInfo& info) {
  KernelIdentity kernel = read_kernel_identity();
  info.kernel_build_id = std::move(kernel.build_id);
  info.kernel_modules = std::move(kernel.modules);
  std::vector<format::KernelSymbol> symbols = read_kallsyms(info.kernel_modules);
  if (kallsyms_hidden(symbols)) {
    std::fprintf(stderr,
                 "ebprof-record: warning: kernel addresses are hidden (kernel.kptr_restrict): "
                 "kernel frames will be unnamed; record as root or set kernel.kptr_restrict=0\n");
    info.kernel_addresses_hidden = true;
    symbols.clear();
  }
  return KernelSymbolIndex(std::move(symbols));
}

// --off-cpu's settings, its hook probed: only when asked, since probing
// loads programs.
OffCpuConfig off_cpu_config(const RecordOptions& o) {
  OffCpuConfig c;
  c.enabled = o.off_cpu || o.off_cpu_only;
  if (!c.enabled)
    return c;  // check_options() refused shaping options without it
  c.hook = o.off_cpu_hook == "auto" ? probe_switch_hook() : parse_switch_hook(o.off_cpu_hook);
  if (!switch_hook_attaches(c.hook))
    throw Error("--off-cpu-hook " + o.off_cpu_hook +
                ": this kernel does not attach it; use --off-cpu-hook auto");
  if (c.hook == SwitchHook::kTracepoint)
    tracefs();  // libbpf attaches tracepoints through it
  c.min_block_ns = o.min_block_us * 1000;
  c.max_block_ns = o.max_block_us * 1000;
  c.states = parse_block_states(o.states);
  c.user_threads_only = o.user_threads_only;
  c.kernel_threads_only = o.kernel_threads_only;
  c.wakers = o.wakers;
  return c;
}

}  // namespace

void run_session(const RecordOptions& o) {
  check_options(o);
  const std::vector<uint32_t> pids = resolve_pids(o.pids);
  const std::vector<uint32_t> tids = check_tids(o.tids);
  if (!tids.empty() && (!o.pids.empty() || !o.command.empty()))
    throw Error("-t picks threads on its own: give it without -p or a command");
  const UniqueFd cgroup = open_cgroup(o.cgroup);
  const bool has_command = !o.command.empty();
  const bool filter = !pids.empty() || (has_command && !o.all_cpus);
  const std::vector<int> cpus = select_cpus(o.cpu_list);
  const EventSpec event = find_event(o.event);
  // A probe or tracepoint gives a stack on every hit.
  const SamplingRate rate = event.kind != EventSpec::Kind::kPerf ? SamplingRate{0, 1}
                            : o.period                           ? SamplingRate{0, o.period}
                                                                 : SamplingRate{o.frequency, 0};

  // Mapping events start before /proc is read, so that no change can fall
  // between the two; and both before sampling, so that every sample finds
  // its process known.
  std::optional<SideBand> side_band = open_side_band();
  ElfIdentities identities;
  ProcessTracker tracker(
      [&](uint32_t pid, uint64_t now) { return read_process(pid, now, identities); },
      side_band ? ProcessTracker::Refill([&](auto& out) { side_band->drain(out); })
                : ProcessTracker::Refill(),
      [&](uint32_t pid, format::ProcessInfo& info) {
        for (format::Mapping& m : info.mappings)
          identities.complete(pid, m);
        if (!info.place.pid_namespace || !info.place.namespace_pid)
          if (format::ProcessPlace place = read_place(pid); place.pid_namespace)
            info.place = std::move(place);
      });
  const uint64_t seeded_at = monotonic_ns();
  size_t seeded = 0;
  for (uint32_t pid : existing_targets(!filter && tids.empty(), pids, tids)) {
    tracker.seed(read_process(pid, seeded_at, identities));
    // A busy host maps and execs while thousands of processes are read:
    // keep the side band from overflowing meanwhile.
    if (++seeded % 64 == 0)
      tracker.refill();
  }

  std::unique_ptr<Recorder> recorder;
  SamplerConfig config{!o.off_cpu_only,
                       off_cpu_config(o),
                       event,
                       rate,
                       cpus,
                       filter,
                       !tids.empty(),
                       cgroup.get(),
                       choose_transport(o.transport),
                       o.mmap_pages ? o.mmap_pages : pages_per_cpu_for(rate, cpus.size())};
  // Records only arrive inside consume(), after `recorder` is set.
  BpfSampler sampler(config, [&](std::span<const std::byte> r) { recorder->on_record(r); });
  tracker.refill();  // loading and verifying took a while
  for (uint32_t pid : pids)
    sampler.add_pid(pid);
  for (uint32_t tid : tids)
    sampler.add_tid(tid);

  keep_previous(o.output);
  auto writer = format::RecordingWriter::create(o.output, o.writer);
  format::RecordingInfo info = describe_host();
  info.command_line = o.argv;
  info.event = event.name;
  info.sample_frequency = rate.frequency;
  info.sample_period = rate.period;
  info.cpu_count = static_cast<uint32_t>(cpus.size());
  info.transport = transport_name(config.transport);
  info.sampling = config.sampling;
  if (config.off_cpu.enabled) {
    info.off_cpu = switch_hook_name(config.off_cpu.hook);
    info.off_cpu_min_block_ns = config.off_cpu.min_block_ns;
    info.off_cpu_max_block_ns = config.off_cpu.max_block_ns;
    info.off_cpu_states = config.off_cpu.states;
  }
  KernelSymbolIndex kernel = kernel_symbols(info);
  writer.write(info);
  recorder = std::make_unique<Recorder>(
      writer, std::move(kernel), std::move(tracker),
      o.embed_symbols ? std::optional<SymbolEmbedder>(SymbolEmbedder()) : std::nullopt);

  set_stop_handlers(on_stop_signal);
  std::optional<ChildProcess> child;
  if (has_command) {
    child.emplace(ChildProcess::start(o.command));
    if (filter)
      sampler.add_pid(static_cast<uint32_t>(child->pid()));
  }

  const uint64_t start_ns = monotonic_ns();
  const uint64_t deadline_ns =
      o.duration_s > 0 ? start_ns + static_cast<uint64_t>(o.duration_s * 1e9) : UINT64_MAX;
  StatusLine status(o.quiet, start_ns);
  constexpr uint64_t kLossReportNs = 1'000'000'000;
  uint64_t next_loss_report_ns = start_ns + kLossReportNs;
  while (!g_stop_signal) {
    sampler.wait(100);
    // Mapping events first: they precede the samples that need them.
    recorder->refresh_processes();
    sampler.consume();
    uint64_t now = monotonic_ns();
    recorder->flush(now);
    if (now >= next_loss_report_ns) {
      recorder->write_losses(now, sampler.losses());
      next_loss_report_ns = now + kLossReportNs;
    }
    if (status.due(now))
      status.show(now, {(now - start_ns) / 1e9, recorder->stats().samples, writer.bytes_written(),
                        total_lost(recorder->loss_totals(sampler.losses()))});
    if (now >= deadline_ns)
      break;
    if (child && child->try_wait())
      break;
    if (!pids.empty() && std::none_of(pids.begin(), pids.end(), process_exists))
      break;
  }
  status.clear();
  set_stop_handlers(SIG_DFL);
  recorder->refresh_processes();
  sampler.consume();  // what the kernel committed before we stopped
  recorder->flush(0, true);
  const std::vector<format::LossCount> in_kernel = sampler.losses();
  const uint64_t end_ns = monotonic_ns();
  recorder->write_losses(end_ns, in_kernel);
  const std::vector<format::LossCount> losses = recorder->loss_totals(in_kernel);
  writer.write(format::RecordingEnd{end_ns, losses, recorder->lost_task_events()});
  writer.close();

  if (recorder->lost_task_events())
    std::fprintf(stderr,
                 "ebprof-record: warning: the kernel dropped %llu mapping events; maps of some "
                 "short-lived processes may be incomplete\n",
                 static_cast<unsigned long long>(recorder->lost_task_events()));
  if (o.quiet)
    return;
  const uint64_t lost = total_lost(losses);
  std::string partial;
  if (uint64_t n = total_lost(losses, true))
    partial = ", " + std::to_string(n) + " with partial stacks";
  const RecorderStats& st = recorder->stats();
  std::string embedded;
  if (size_t binaries = recorder->embedded_binaries())
    embedded = ", symbols of " + std::to_string(binaries) + " binaries embedded in " +
               std::to_string(st.embed_ns / 1'000'000) + " ms";
  const std::string off_cpu =
      st.off_cpu ? ", of them " + std::to_string(st.off_cpu) + " intervals off CPU" : "";
  std::fprintf(stderr,
               "[ ebprof-record: wrote %.3f MB to %s (%llu samples%s, %u stacks, %zu processes, "
               "%llu lost%s%s) ]\n",
               writer.bytes_written() / 1e6, o.output.c_str(),
               static_cast<unsigned long long>(st.samples), off_cpu.c_str(),
               recorder->stack_count(), recorder->process_count(),
               static_cast<unsigned long long>(lost), partial.c_str(), embedded.c_str());
}

}  // namespace ebprof::record
