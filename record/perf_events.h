#pragma once

#include <cstdint>
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

struct PerfEvent {
  int cpu = -1;
  UniqueFd fd;
};

// Opens a cpu-clock event sampling at `frequency` Hz on each of `cpus`,
// skipping CPUs that went offline. Throws Error with the cause and the fix
// (privileges, perf_event_max_sample_rate) when none can be opened.
std::vector<PerfEvent> open_cpu_clock_events(uint64_t frequency, const std::vector<int>& cpus);

}  // namespace ebprof::record
