#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "format/recording.h"
#include "record/perf_events.h"

struct profile_bpf;
struct bpf_link;
struct ring_buffer;

namespace ebprof::record {

struct SamplerConfig {
  EventSpec event;
  SamplingRate rate;
  std::vector<int> cpus;
  bool filter_pids = false;  // sample only pids passed to add_pid() and their descendants
  size_t ring_bytes = 0;     // a power of two, at least one page
};

// Ring-buffer size for a sampling rate: room for about a second of samples of
// typical depth, so a reader that stalls briefly loses nothing. With a
// period (-c) the rate is unknown; 1000 samples per second is assumed.
size_t ring_bytes_for(const SamplingRate& rate, size_t cpu_count);

// Owns the BPF side: opens, configures, loads and attaches profile.bpf.c to a
// sampling perf event on every CPU, and reads its ring buffer. Everything it owns
// is released in reverse order of creation, on any path.
class BpfSampler {
 public:
  using Handler = std::function<void(std::span<const std::byte> record)>;

  // Throws Error naming what is missing (BTF, ring buffer, privileges).
  BpfSampler(const SamplerConfig& config, Handler handler);
  ~BpfSampler();
  BpfSampler(const BpfSampler&) = delete;
  BpfSampler& operator=(const BpfSampler&) = delete;

  void add_pid(uint32_t pid);

  // Waits up to timeout_ms, then hands every record available to the handler.
  // A signal ends the wait early; that is not an error. Rethrows what the
  // handler threw.
  void poll(int timeout_ms);

  // Samples lost in the kernel so far, summed over CPUs, by cause.
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

  Handler handler_;
  // An exception thrown by the handler, held while libbpf (C) unwinds.
  std::exception_ptr handler_error_;
  std::unique_ptr<profile_bpf, SkelDelete> skel_;
  std::vector<std::unique_ptr<bpf_link, LinkDelete>> links_;
  std::unique_ptr<ring_buffer, RingDelete> ring_;
};

}  // namespace ebprof::record
