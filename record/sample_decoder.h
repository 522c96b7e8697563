#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ebprof::record {

// One ring-buffer record, checked and viewed in place. The spans and comm
// point into the record's bytes and live as long as they do.
struct RawSample {
  uint64_t time_ns = 0;
  uint32_t tgid = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;
  bool off_cpu = false;        // an interval off CPU, ended at time_ns
  bool waker_follows = false;  // off CPU: the next record from its CPU is its waker's
  bool waker = false;          // who woke thread `peer`: the stack is the waker's
  uint32_t peer = 0;
  uint64_t blocked_ns = 0;  // off CPU: how long
  uint8_t state = 0;        // off CPU: format::BlockState
  std::string_view comm;
  std::span<const uint64_t> kernel;  // leaf first
  std::span<const uint64_t> user;    // leaf first
};

// Decodes the struct ebprof_sample in `bytes`, or nullopt when its size or
// frame counts do not add up (never trust a length read from a buffer). The
// ring buffer hands out 8-byte aligned records, which the spans rely on.
std::optional<RawSample> decode_sample(std::span<const std::byte> bytes);

}  // namespace ebprof::record
