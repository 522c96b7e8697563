#include "record/bpf_sampler.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "bpf/profile.h"
#include "format/losses.h"
#include "profile.skel.h"
#include "record/host_info.h"
#include "record/privileges.h"

namespace ebprof::record {
namespace {

constexpr const char* kVmlinuxBtf = "/sys/kernel/btf/vmlinux";

// The kernel caps a BPF ring buffer's size well above this; a larger one
// only costs locked memory.
constexpr size_t kMaxRingBytes = size_t{1} << 30;

[[noreturn]] void throw_bpf(const std::string& what, int err) {
  if (err == EPERM || err == EACCES)
    throw missing_privileges(what);
  throw Error(errno_message(what, err) + " (rerun with -v for libbpf's log)");
}

void check_btf() {
  if (!std::filesystem::exists(kVmlinuxBtf))
    throw Error(std::string("this kernel has no BTF (") + kVmlinuxBtf +
                " is missing): ebprof-record needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
}

// Explains a failed load. Feature probes run only now, and only when the
// failure was not about privileges: without them a probe cannot tell
// "unsupported" from "not allowed".
[[noreturn]] void throw_load_failure(int err, Transport transport) {
  // The verifier refuses a program with EACCES too: as root that is what
  // it means.
  if (err == EACCES && geteuid() == 0)
    throw Error(
        "this kernel's BPF verifier refused the programs (rerun with -v for its log, and report "
        "it with the kernel version)");
  if (err != EPERM && err != EACCES && transport == Transport::kRingBuffer &&
      libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 0)
    throw Error("this kernel has no BPF ring buffer (Linux 5.8 or newer): use --transport perfbuf");
  throw_bpf("loading the BPF programs", err);
}

// The perf-buffer transport's event: BPF output, each record a raw sample,
// waking the reader only when a buffer is a quarter full.
perf_event_attr bpf_output_attr(size_t pages_per_cpu) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_BPF_OUTPUT;
  attr.sample_type = PERF_SAMPLE_RAW;
  attr.sample_period = 1;
  attr.watermark = 1;
  attr.wakeup_watermark = static_cast<uint32_t>(pages_per_cpu * getpagesize() / 4);
  return attr;
}

// The BPF record inside a PERF_RECORD_SAMPLE that carries only raw data:
// header, u32 size, then the bytes (padded to 8). Lost records are not
// counted here: bpf_perf_event_output() reported the same drops to BPF,
// which counted them per CPU and cause.
std::span<const std::byte> raw_data(std::span<const std::byte> record) {
  perf_event_header header;
  uint32_t size = 0;
  if (record.size() < sizeof(header) + sizeof(size))
    return {};
  std::memcpy(&header, record.data(), sizeof(header));
  std::memcpy(&size, record.data() + sizeof(header), sizeof(size));
  const size_t offset = sizeof(header) + sizeof(size);
  if (header.type != PERF_RECORD_SAMPLE || size > record.size() - offset)
    return {};
  return record.subspan(offset, size);
}

}  // namespace

Transport probe_transport() {
  return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 1 ? Transport::kRingBuffer
                                                                       : Transport::kPerfBuffers;
}

uint32_t max_user_stack_bytes(Transport transport) {
  if (transport == Transport::kRingBuffer)
    return EBPROF_MAX_USER_STACK;
  // A perf record: its 8-byte header and the raw size (4) before the data,
  // the sample's header, frames and Python frames in the data.
  constexpr uint32_t kRecordMax = 0xffff - 8 - 4 - 8;
  return (kRecordMax - sizeof(ebprof_sample) - EBPROF_MAX_PY_FRAMES * 16) & ~7u;
}

const char* transport_name(Transport t) {
  return t == Transport::kRingBuffer ? "ringbuf" : "perfbuf";
}

size_t pages_per_cpu_for(const SamplingRate& rate, size_t cpu_count, uint32_t user_stack_bytes) {
  // Above what one reader drains (about 75,000 records a second here) a
  // bigger buffer only delays the losses, and -F max's 100 kHz made 128
  // MiB that took seconds to set up.
  constexpr uint64_t kMostDrained = 25'000;
  const uint64_t frequency = std::min(rate.frequency ? rate.frequency : 1000, kMostDrained);
  constexpr size_t kTypicalSampleBytes = 1024;  // header + ~120 frames
  const size_t pages = frequency * (kTypicalSampleBytes + user_stack_bytes) / 4 / getpagesize();
  // The shared ring buffer of many CPUs must stay within kMaxRingBytes.
  const size_t most =
      std::bit_floor(kMaxRingBytes / getpagesize() / std::max<size_t>(cpu_count, 1));
  return std::min(std::bit_ceil(std::clamp<size_t>(pages, 64, 16384)), std::max<size_t>(most, 1));
}

void BpfSampler::SkelDelete::operator()(profile_bpf* skel) const {
  profile_bpf__destroy(skel);
}
void BpfSampler::LinkDelete::operator()(bpf_link* link) const {
  bpf_link__destroy(link);
}
void BpfSampler::RingDelete::operator()(ring_buffer* ring) const {
  ring_buffer__free(ring);
}

BpfSampler::BpfSampler(const SamplerConfig& config) {
  check_btf();
  skel_.reset(profile_bpf__open());
  if (!skel_)
    throw_bpf("opening the BPF object", errno);
  configure(config);
  if (int err = profile_bpf__load(skel_.get()))
    throw_load_failure(-err, config.transport);
  fill_filters(config);
  // Readers first, then the programs that fill them, so that no early
  // sample finds nowhere to go; fork-following before sampling, so that no
  // child of a target is born unseen.
  open_readers(config);
  if (config.tasks == TaskFilter::kProcesses) {
    attach(skel_->progs.follow_fork, "following forks");
    attach(skel_->progs.forget_exited, "following exits");
  }
  // The targets' own events are opened as they are known (sample_task()),
  // before start().
  if (config.sampling && config.per_task)
    per_task_ = config.sampling;
}

void BpfSampler::start(const SamplerConfig& config) {
  if (config.off_cpu)
    attach_off_cpu(*config.off_cpu);
  if (config.sampling)
    attach_event(config);
}

BpfSampler::~BpfSampler() = default;

// One ring for all CPUs, as large as the per-CPU buffers together.
size_t buffer_bytes(const SamplerConfig& config) {
  return std::bit_ceil(config.pages_per_cpu * getpagesize() * config.cpus.size());
}

// Settings and which programs and maps load: before the object is loaded.
void BpfSampler::configure(const SamplerConfig& config) {
  const bool ring = config.transport == Transport::kRingBuffer;
  if (ring && buffer_bytes(config) > kMaxRingBytes)
    throw Error("-m " + std::to_string(config.pages_per_cpu) + " pages on " +
                std::to_string(config.cpus.size()) + " CPUs is more than the " +
                std::to_string(kMaxRingBytes >> 20) + " MiB ring buffer allowed: lower -m");
  skel_->rodata->filter_tgid = config.tasks == TaskFilter::kProcesses;
  skel_->rodata->filter_tid = config.tasks == TaskFilter::kThreads;
  skel_->rodata->filter_cgroup = config.cgroup_fd >= 0;
  using Kind = EventSpec::Kind;
  const std::optional<Kind> kind =
      config.sampling ? std::optional(config.sampling->event.kind) : std::nullopt;
  // A perf event is opened on the chosen CPUs only; probes and context
  // switches fire everywhere.
  skel_->rodata->filter_cpu =
      (kind != Kind::kPerf || config.off_cpu) && config.cpus != online_cpus();
  if (int err = bpf_map__set_max_entries(skel_->maps.target_cpus, libbpf_num_possible_cpus()))
    throw_bpf("sizing the CPU filter", -err);
  // Only the programs the event and --off-cpu need are loaded.
  bpf_program__set_autoload(skel_->progs.sample_stack, kind == Kind::kPerf);
  bpf_program__set_autoload(skel_->progs.tracepoint_stack, kind == Kind::kTracepoint);
  bpf_program__set_autoload(skel_->progs.probe_stack,
                            kind == Kind::kUprobe || kind == Kind::kKprobe);
  configure_off_cpu(config.off_cpu);
  skel_->rodata->use_perfbuf = !ring;
  skel_->rodata->user_stack_bytes = config.user_stack_bytes;
  skel_->rodata->stack_for_frameless_only = config.stack_for_frameless_only;
  // Records are assembled with their stack in a slot per CPU; the switches'
  // slots are used only with --off-cpu.
  if (int err = bpf_map__set_max_entries(skel_->maps.stack_scratch, libbpf_num_possible_cpus()))
    throw_bpf("sizing the stack copies", -err);
  if (int err = bpf_map__set_max_entries(skel_->maps.switch_stack_scratch,
                                         config.off_cpu ? libbpf_num_possible_cpus() : 1))
    throw_bpf("sizing the stack copies", -err);
  skel_->rodata->wakeup_bytes = buffer_bytes(config) / 4;
  if (int err = bpf_map__set_max_entries(skel_->maps.events, buffer_bytes(config)))
    throw_bpf("sizing the ring buffer", -err);
  // A kernel without ring buffers cannot create the map; the program's
  // ring-buffer path is dead code then, so nothing refers to it.
  if (!ring)
    bpf_map__set_autocreate(skel_->maps.events, false);
}

void BpfSampler::configure_off_cpu(const std::optional<OffCpuConfig>& c) {
  auto hook_is = [&](SwitchHook hook) { return c && c->hook == hook; };
  bpf_program__set_autoload(skel_->progs.off_cpu_btf, hook_is(SwitchHook::kBtfTracepoint));
  bpf_program__set_autoload(skel_->progs.off_cpu_raw, hook_is(SwitchHook::kRawTracepoint));
  bpf_program__set_autoload(skel_->progs.off_cpu_tp, hook_is(SwitchHook::kTracepoint));
  const bool wakers = c && c->wakers;
  bpf_program__set_autoload(skel_->progs.waker_btf, wakers && hook_is(SwitchHook::kBtfTracepoint));
  bpf_program__set_autoload(skel_->progs.waker_raw, wakers && hook_is(SwitchHook::kRawTracepoint));
  bpf_program__set_autoload(skel_->progs.waker_tp, wakers && hook_is(SwitchHook::kTracepoint));
  // What nothing uses takes no memory either.
  bpf_map__set_autocreate(skel_->maps.off_cpu_waker, wakers);
  bpf_map__set_autocreate(skel_->maps.waker_scratch, wakers);
  if (!c) {
    bpf_map__set_autocreate(skel_->maps.off_cpu_start, false);
    bpf_map__set_autocreate(skel_->maps.off_cpu_scratch, false);
    return;
  }
  skel_->rodata->wakers = wakers;
  skel_->rodata->min_block_ns = c->min_block_ns;
  skel_->rodata->max_block_ns = c->max_block_ns ? c->max_block_ns : ~0ull;
  skel_->rodata->state_mask = c->states;
  skel_->rodata->user_threads_only = c->threads == ThreadKinds::kUser;
  skel_->rodata->kernel_threads_only = c->threads == ThreadKinds::kKernel;
  skel_->rodata->switch_has_prev_state =
      c->hook != SwitchHook::kTracepoint && switch_passes_prev_state();
  // Run-time allocation from tracepoint programs warns (and taints) on
  // kernels before 6.1, and is refused on RT ones: only BTF tracing
  // programs, which are safe with it, get a table that grows on demand.
  // The others get a preallocated one, smaller (an entry is ~2 KiB).
  if (c->hook != SwitchHook::kBtfTracepoint)
    for (bpf_map* table : {skel_->maps.off_cpu_start, skel_->maps.off_cpu_waker}) {
      if (int err = bpf_map__set_map_flags(table, 0))
        throw_bpf("setting up the off-CPU tables", -err);
      if (int err = bpf_map__set_max_entries(table, 8192))
        throw_bpf("sizing the off-CPU tables", -err);
    }
}

// The cgroup and CPU filters, into the loaded maps.
void BpfSampler::fill_filters(const SamplerConfig& config) {
  if (config.cgroup_fd >= 0) {
    uint32_t slot = 0;
    if (bpf_map__update_elem(skel_->maps.target_cgroup, &slot, sizeof(slot), &config.cgroup_fd,
                             sizeof(config.cgroup_fd), BPF_ANY))
      throw_errno("setting the cgroup filter (a cgroup v2 directory is needed)", errno);
  }
  for (int cpu : config.cpus) {
    uint32_t key = static_cast<uint32_t>(cpu);
    uint8_t on = 1;
    if (bpf_map__update_elem(skel_->maps.target_cpus, &key, sizeof(key), &on, sizeof(on), 0))
      throw_errno("setting the CPU filter", errno);
  }
}

void BpfSampler::open_readers(const SamplerConfig& config) {
  if (config.transport == Transport::kRingBuffer) {
    ring_.reset(
        ring_buffer__new(bpf_map__fd(skel_->maps.events), &BpfSampler::on_record, this, nullptr));
    if (!ring_)
      throw_bpf("opening the ring buffer", errno);
    return;
  }
  // An interval off CPU ends, and is sent, on whichever CPU the thread
  // comes back on: with --off-cpu every CPU needs a buffer.
  perf_ring_ = std::make_unique<PerfRing>(
      bpf_map__fd(skel_->maps.perf_events), config.pages_per_cpu,
      bpf_output_attr(config.pages_per_cpu), config.off_cpu ? online_cpus() : config.cpus,
      [this](int, std::span<const std::byte> record) { keep_raw(raw_data(record)); });
}

void BpfSampler::attach(bpf_program* prog, const std::string& what) {
  bpf_link* link = bpf_program__attach(prog);
  if (!link)
    throw_bpf(what, errno);
  links_.emplace_back(link);
}

void BpfSampler::attach_off_cpu(const OffCpuConfig& c) {
  auto pick = [&](bpf_program* btf, bpf_program* raw, bpf_program* tracepoint) {
    return c.hook == SwitchHook::kBtfTracepoint   ? btf
           : c.hook == SwitchHook::kRawTracepoint ? raw
                                                  : tracepoint;
  };
  attach(pick(skel_->progs.off_cpu_btf, skel_->progs.off_cpu_raw, skel_->progs.off_cpu_tp),
         std::string("attaching --off-cpu to ") + switch_hook_name(c.hook));
  if (c.wakers)
    attach(pick(skel_->progs.waker_btf, skel_->progs.waker_raw, skel_->progs.waker_tp),
           "attaching --wakers to sched_waking");
}

void BpfSampler::attach_event(const SamplerConfig& config) {
  const EventSpec& e = config.sampling->event;
  bpf_link* link = nullptr;
  switch (e.kind) {
    case EventSpec::Kind::kPerf:
      if (config.per_task)
        return;  // opened on the targets as they are known
      for (PerfEvent& event : open_sampling_events(e, config.sampling->rate, config.cpus)) {
        link = bpf_program__attach_perf_event(skel_->progs.sample_stack, event.fd.get());
        if (!link)
          throw_bpf("attaching to the perf event of CPU " + std::to_string(event.cpu), errno);
        event.fd.release();  // the link owns the perf event fd now
        links_.emplace_back(link);
      }
      return;
    case EventSpec::Kind::kTracepoint:
      link = bpf_program__attach_tracepoint(skel_->progs.tracepoint_stack, e.group.c_str(),
                                            e.target.c_str());
      break;
    case EventSpec::Kind::kUprobe: {
      LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = e.target.c_str());
      link =
          bpf_program__attach_uprobe_opts(skel_->progs.probe_stack, -1, e.group.c_str(), 0, &opts);
      if (!link && errno == ENOENT)
        throw Error("-e " + e.name + ": " + e.group + " has no function " + e.target +
                    " (give the name as nm shows it: mangled for C++)");
      break;
    }
    case EventSpec::Kind::kKprobe:
      link = bpf_program__attach_kprobe(skel_->progs.probe_stack, false, e.target.c_str());
      if (!link && errno == ENOENT)
        throw Error("-e " + e.name + ": the kernel has no probeable function " + e.target +
                    " (see /sys/kernel/tracing/available_filter_functions)");
      break;
  }
  if (!link)
    throw_bpf("attaching to -e " + e.name, errno);
  links_.emplace_back(link);
}

int BpfSampler::on_record(void* ctx, void* data, size_t size) {
  auto* self = static_cast<BpfSampler*>(ctx);
  try {
    (*self->handler_)(std::span<const std::byte>(static_cast<const std::byte*>(data), size));
  } catch (...) {
    self->handler_error_ = std::current_exception();
    return -ECANCELED;  // stops libbpf's consume loop
  }
  // The record is consumed either way; the clock is read now and then.
  if (++self->consumed_ % 256 == 0 && monotonic_ns() > self->consume_until_ns_)
    return -EAGAIN;
  return 0;
}

void BpfSampler::sample_task(uint32_t tid, bool on_exec) {
  if (!per_task_)
    return;
  std::optional<PerfEvent> event = open_task_event(per_task_->event, per_task_->rate, tid, on_exec);
  if (!event)
    return;
  // Not bpf_program__attach_perf_event(), which enables the event: one
  // that waits for its exec must stay off until then.
  if (ioctl(event->fd.get(), PERF_EVENT_IOC_SET_BPF, bpf_program__fd(skel_->progs.sample_stack)))
    throw_bpf("attaching to the perf event of task " + std::to_string(tid), errno);
  task_events_.push_back(std::move(event->fd));
}

void BpfSampler::publish_python(uint32_t pid, const ebprof_python_proc* entry) {
  // A full map leaves a process walked natively; a pid no longer there
  // was removed already: neither stops a recording.
  if (entry)
    bpf_map__update_elem(skel_->maps.python_procs, &pid, sizeof(pid), entry, sizeof(*entry),
                         BPF_ANY);
  else
    bpf_map__delete_elem(skel_->maps.python_procs, &pid, sizeof(pid), 0);
}

size_t BpfSampler::CodeKeyHash::operator()(const ebprof_code_key& k) const {
  return (uint64_t{k.tgid} << 32 ^ k.image) * 0x9e3779b97f4a7c15ull ^ k.region;
}

bool BpfSampler::CodeKeyEqual::operator()(const ebprof_code_key& a,
                                          const ebprof_code_key& b) const {
  return a.tgid == b.tgid && a.image == b.image && a.region == b.region;
}

void BpfSampler::publish_frameless_code(const ebprof_code_key& key, uint64_t granules) {
  // Records already in the buffer ask again until they are read: one
  // answer is enough. Once more keys were answered than the map holds,
  // some were pushed out of it, and are answered again when asked.
  if (answered_.size() >= bpf_map__max_entries(skel_->maps.frameless_code))
    answered_.clear();
  if (!answered_.insert(key).second)
    return;
  // A failure only leaves BPF copying the stack there, and asking again.
  if (bpf_map__update_elem(skel_->maps.frameless_code, &key, sizeof(key), &granules,
                           sizeof(granules), BPF_ANY))
    answered_.erase(key);
}

void BpfSampler::add_pid(uint32_t pid) {
  uint8_t one = 1;
  if (bpf_map__update_elem(skel_->maps.target_tgids, &pid, sizeof(pid), &one, sizeof(one), BPF_ANY))
    throw_errno("adding pid " + std::to_string(pid) + " to the BPF filter", errno);
}

void BpfSampler::keep_raw(std::span<const std::byte> raw) {
  if (raw.size() < sizeof(uint64_t))
    return;
  // Copied into 8-byte-aligned storage: a raw sample starts 4 bytes into
  // its 8-byte-aligned perf record, and the decoder reads u64 frames.
  const size_t words = (raw.size() + 7) / 8;
  const size_t at = arena_.size();
  arena_.resize(at + words);
  std::memcpy(arena_.data() + at, raw.data(), raw.size());
  pending_.push_back({arena_[at], at, raw.size()});  // time_ns leads every record
}

void BpfSampler::hand_over_in_time_order() {
  // libbpf drains one CPU's buffer after another; the process tracker
  // applies mapping events in sample-time order, so samples must come in
  // time order too, as they do from the one shared ring buffer.
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const Pending& a, const Pending& b) { return a.time_ns < b.time_ns; });
  for (const Pending& p : pending_)
    (*handler_)(std::span<const std::byte>(
        reinterpret_cast<const std::byte*>(arena_.data() + p.word), p.bytes));
  pending_.clear();
  arena_.clear();
}

void BpfSampler::add_tid(uint32_t tid) {
  uint8_t one = 1;
  if (bpf_map__update_elem(skel_->maps.target_tids, &tid, sizeof(tid), &one, sizeof(one), BPF_ANY))
    throw_errno("adding thread " + std::to_string(tid) + " to the BPF filter", errno);
}

void BpfSampler::wait(int timeout_ms) {
  epoll_event event;
  int fd = ring_ ? ring_buffer__epoll_fd(ring_.get()) : perf_ring_->epoll_fd();
  if (epoll_wait(fd, &event, 1, timeout_ms) < 0 && errno != EINTR)
    throw_errno("waiting for samples", errno);
}

bool BpfSampler::consume(const Handler& handler) {
  handler_ = &handler;
  if (perf_ring_) {
    perf_ring_->consume();
    hand_over_in_time_order();
    return false;
  }
  consume_until_ns_ = monotonic_ns() + kConsumeBudgetNs;
  int n = ring_buffer__consume(ring_.get());
  if (handler_error_)
    std::rethrow_exception(std::exchange(handler_error_, nullptr));
  if (n == -EAGAIN)
    return true;
  if (n < 0)
    throw_errno("reading the ring buffer", -n);
  return false;
}

void BpfSampler::stop() {
  task_events_.clear();
  links_.clear();
}

// The file's causes, by BPF's numbers.
constexpr format::LossCause kCauses[EBPROF_LOSS_CAUSES] = {
    format::LossCause::kBufferFull,          format::LossCause::kKernelStackUnreadable,
    format::LossCause::kUserStackUnreadable, format::LossCause::kStackTruncated,
    format::LossCause::kPerfBufferOutput,    format::LossCause::kOffCpuTableFull,
};
static_assert(kCauses[EBPROF_LOSS_RINGBUF_FULL] == format::LossCause::kBufferFull);
static_assert(kCauses[EBPROF_LOSS_OFF_CPU_FULL] == format::LossCause::kOffCpuTableFull);

std::vector<format::LossCount> BpfSampler::losses() const {
  int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0)
    throw_errno("counting possible CPUs", -ncpus);
  std::vector<uint64_t> per_cpu(ncpus);
  std::vector<format::LossCount> out;
  for (uint32_t cause = 0; cause < EBPROF_LOSS_CAUSES; ++cause) {
    if (bpf_map__lookup_elem(skel_->maps.losses, &cause, sizeof(cause), per_cpu.data(),
                             per_cpu.size() * sizeof(uint64_t), 0))
      throw_errno("reading loss counters", errno);
    for (int cpu = 0; cpu < ncpus; ++cpu)
      if (per_cpu[cpu])
        out.push_back({kCauses[cause], per_cpu[cpu], format::loss_keeps_sample(kCauses[cause]),
                       static_cast<uint16_t>(cpu)});
  }
  return out;
}

}  // namespace ebprof::record
