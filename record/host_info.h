#pragma once

#include <cstdint>

#include "format/contents.h"

namespace ebprof::record {

// CLOCK_MONOTONIC in nanoseconds: the clock bpf_ktime_get_ns() reads.
uint64_t monotonic_ns();
// CLOCK_REALTIME in nanoseconds.
uint64_t realtime_ns();

// Host facts and the start-time clock pair; the caller adds what it knows
// about the recording itself (event, targets, command line).
format::RecordingInfo describe_host();

}  // namespace ebprof::record
