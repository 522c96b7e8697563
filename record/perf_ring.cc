#include "record/perf_ring.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <string>

#include "common/error.h"

namespace ebprof::record {

void PerfRing::Delete::operator()(perf_buffer* ring) const {
  perf_buffer__free(ring);
}

PerfRing::PerfRing(int map_fd, size_t pages, perf_event_attr attr, const std::vector<int>& cpus,
                   Handler handler)
    : handler_(std::move(handler)) {
  std::vector<int> cpu_list = cpus;  // libbpf takes non-const arrays
  perf_buffer_raw_opts opts{};
  opts.sz = sizeof(opts);
  opts.cpu_cnt = static_cast<int>(cpu_list.size());
  opts.cpus = cpu_list.data();
  opts.map_keys = cpu_list.data();
  ring_.reset(perf_buffer__new_raw(map_fd, pages, &attr, &PerfRing::on_event, this, &opts));
  if (!ring_)
    throw_errno("opening per-CPU perf rings", errno);
}

PerfRing::~PerfRing() = default;

bpf_perf_event_ret PerfRing::on_event(void* ctx, int cpu, perf_event_header* header) {
  auto* self = static_cast<PerfRing*>(ctx);
  try {
    self->handler_(
        cpu, std::span<const std::byte>(reinterpret_cast<const std::byte*>(header), header->size));
  } catch (...) {
    self->handler_error_ = std::current_exception();
    return static_cast<bpf_perf_event_ret>(LIBBPF_PERF_EVENT_ERROR);
  }
  return static_cast<bpf_perf_event_ret>(LIBBPF_PERF_EVENT_CONT);
}

void PerfRing::consume() {
  int err = perf_buffer__consume(ring_.get());
  if (handler_error_)
    std::rethrow_exception(std::exchange(handler_error_, nullptr));
  if (err < 0)
    throw_errno("reading the perf rings", -err);
}

int PerfRing::epoll_fd() const {
  return perf_buffer__epoll_fd(ring_.get());
}

UniqueFd create_perf_event_array(const char* name) {
  int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0)
    throw_errno("counting possible CPUs", -cpus);
  int fd = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, name, sizeof(int), sizeof(int),
                          static_cast<uint32_t>(cpus), nullptr);
  if (fd < 0)
    throw_errno(std::string("creating the BPF map ") + name, errno);
  return UniqueFd(fd);
}

}  // namespace ebprof::record
