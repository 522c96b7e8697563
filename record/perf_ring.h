#pragma once

#include <bpf/libbpf.h>
#include <linux/perf_event.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "common/unique_fd.h"

namespace ebprof::record {

// One perf event per CPU, each with its own mmap'ed ring, read through
// libbpf's perf_buffer. The event fds are stored in a BPF_PERF_EVENT_ARRAY
// map, which is also how a BPF program writes into the rings
// (bpf_perf_event_output). Serves both the side-band task events and the
// perf-buffer transport for samples.
class PerfRing {
 public:
  // Gets every record whole, header included, wrapped records reassembled.
  using Handler = std::function<void(int cpu, std::span<const std::byte> record)>;

  // Opens `attr` on each of `cpus` with `pages` data pages (a power of two)
  // each. `map_fd` must be a PERF_EVENT_ARRAY with a slot for every CPU
  // number. Throws Error with errno's meaning on failure.
  PerfRing(int map_fd, size_t pages, perf_event_attr attr, const std::vector<int>& cpus,
           Handler handler);
  ~PerfRing();
  PerfRing(const PerfRing&) = delete;
  PerfRing& operator=(const PerfRing&) = delete;

  // Hands every record available now to the handler; never waits. Rethrows
  // what the handler threw.
  void consume();
  // Readable when a ring passed its wakeup mark.
  int epoll_fd() const;

 private:
  struct Delete {
    void operator()(perf_buffer* ring) const;
  };
  static bpf_perf_event_ret on_event(void* ctx, int cpu, perf_event_header* header);

  Handler handler_;
  std::exception_ptr handler_error_;
  std::unique_ptr<perf_buffer, Delete> ring_;
};

// A PERF_EVENT_ARRAY map with a slot for every possible CPU, for a PerfRing
// that no BPF program writes to.
UniqueFd create_perf_event_array(const char* name);

}  // namespace ebprof::record
