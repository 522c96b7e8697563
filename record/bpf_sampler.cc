#include "record/bpf_sampler.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <filesystem>

#include "bpf/profile.h"
#include "common/error.h"
#include "profile.skel.h"

namespace ebprof::record {
namespace {

constexpr const char* kVmlinuxBtf = "/sys/kernel/btf/vmlinux";

[[noreturn]] void throw_bpf(const std::string& what, int err) {
  if (err == EPERM || err == EACCES)
    throw Error("permission denied " + what +
                ": run ebprof-record as root (or grant CAP_BPF, CAP_PERFMON and CAP_SYS_RESOURCE)");
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
[[noreturn]] void throw_load_failure(int err) {
  if (err != EPERM && err != EACCES &&
      libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 0)
    throw Error("this kernel has no BPF ring buffer (Linux 5.8 or newer is needed)");
  throw_bpf("loading the BPF programs", err);
}

}  // namespace

size_t ring_bytes_for(const SamplingRate& rate, size_t cpu_count) {
  const uint64_t frequency = rate.frequency ? rate.frequency : 1000;
  constexpr size_t kTypicalSampleBytes = 1024;  // header + ~120 frames
  size_t bytes = std::max<size_t>(frequency * cpu_count * kTypicalSampleBytes, 1 << 20);
  return std::bit_ceil(std::min<size_t>(bytes, size_t(256) << 20));
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

BpfSampler::BpfSampler(const SamplerConfig& config, Handler handler)
    : handler_(std::move(handler)) {
  check_btf();

  skel_.reset(profile_bpf__open());
  if (!skel_)
    throw_bpf("opening the BPF object", errno);
  skel_->rodata->filter_tgid = config.filter_pids;
  skel_->rodata->wakeup_bytes = config.ring_bytes / 4;
  if (int err = bpf_map__set_max_entries(skel_->maps.events, config.ring_bytes))
    throw_bpf("sizing the ring buffer", -err);
  if (int err = profile_bpf__load(skel_.get()))
    throw_load_failure(-err);

  for (PerfEvent& event : open_sampling_events(config.event, config.rate, config.cpus)) {
    bpf_link* link = bpf_program__attach_perf_event(skel_->progs.sample_stack, event.fd.get());
    if (!link)
      throw_bpf("attaching to the perf event of CPU " + std::to_string(event.cpu), errno);
    event.fd.release();  // the link owns the perf event fd now
    links_.emplace_back(link);
  }

  if (config.filter_pids) {
    for (bpf_program* prog : {skel_->progs.follow_fork, skel_->progs.forget_exited}) {
      bpf_link* link = bpf_program__attach(prog);
      if (!link)
        throw_bpf(std::string("attaching ") + bpf_program__name(prog), errno);
      links_.emplace_back(link);
    }
  }

  ring_.reset(
      ring_buffer__new(bpf_map__fd(skel_->maps.events), &BpfSampler::on_record, this, nullptr));
  if (!ring_)
    throw_bpf("opening the ring buffer", errno);
}

BpfSampler::~BpfSampler() = default;

int BpfSampler::on_record(void* ctx, void* data, size_t size) {
  auto* self = static_cast<BpfSampler*>(ctx);
  try {
    self->handler_(std::span<const std::byte>(static_cast<const std::byte*>(data), size));
  } catch (...) {
    self->handler_error_ = std::current_exception();
    return -ECANCELED;  // stops libbpf's consume loop
  }
  return 0;
}

void BpfSampler::add_pid(uint32_t pid) {
  uint8_t one = 1;
  if (bpf_map__update_elem(skel_->maps.target_tgids, &pid, sizeof(pid), &one, sizeof(one), BPF_ANY))
    throw_errno("adding pid " + std::to_string(pid) + " to the BPF filter", errno);
}

void BpfSampler::poll(int timeout_ms) {
  // The BPF side wakes us only when the ring is a quarter full, so a timed
  // out wait must still consume what was committed silently.
  int n = ring_buffer__poll(ring_.get(), timeout_ms);
  if (n >= 0 || n == -EINTR)
    n = ring_buffer__consume(ring_.get());
  if (handler_error_)
    std::rethrow_exception(std::exchange(handler_error_, nullptr));
  if (n < 0 && n != -EINTR)
    throw_errno("reading the ring buffer", -n);
}

std::vector<format::LossCount> BpfSampler::losses() const {
  static constexpr const char* kCauses[EBPROF_LOSS_CAUSES] = {
      "ring buffer full", "kernel stack unreadable", "user stack unreadable"};
  int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0)
    throw_errno("counting possible CPUs", -ncpus);
  std::vector<uint64_t> per_cpu(ncpus);
  std::vector<format::LossCount> out;
  for (uint32_t cause = 0; cause < EBPROF_LOSS_CAUSES; ++cause) {
    if (bpf_map__lookup_elem(skel_->maps.losses, &cause, sizeof(cause), per_cpu.data(),
                             per_cpu.size() * sizeof(uint64_t), 0))
      throw_errno("reading loss counters", errno);
    uint64_t total = 0;
    for (uint64_t n : per_cpu)
      total += n;
    out.push_back({kCauses[cause], total});
  }
  return out;
}

}  // namespace ebprof::record
