#pragma once

// ebprof-record's options resolved into what each part of a session needs,
// checked before anything slow starts or any file is touched.

#include <cstdint>
#include <vector>

#include "common/unique_fd.h"
#include "record/bpf_sampler.h"
#include "record/options.h"

namespace ebprof::record {

// Throws Error, one line naming the option and the fix, for options that
// cannot work together or values out of range: a typo costs nothing and
// leaves no partial file behind.
void check_options(const RecordOptions& options);

// Who is recorded: -p's processes, -t's threads, --cgroup, -C's CPUs.
struct Targets {
  std::vector<uint32_t> pids;  // -p, resolved to processes
  std::vector<uint32_t> tids;  // -t
  UniqueFd cgroup;             // --cgroup's directory, or empty
  std::vector<int> cpus;       // -C, or every online CPU
  TaskFilter tasks = TaskFilter::kAll;
  // Whether every process is, so every process now alive is read at start.
  bool system_wide() const { return tasks == TaskFilter::kAll; }
};

// Throws Error naming a pid, thread, cgroup or CPU that does not exist.
Targets resolve_targets(const RecordOptions& options);

// What the sampler loads: the event (none with --off-cpu-only) at its rate,
// --off-cpu's settings with its hook probed (only when asked: probing loads
// programs), the targets' filters, the transport and buffer size.
SamplerConfig sampler_config(const RecordOptions& options, const Targets& targets);

}  // namespace ebprof::record
