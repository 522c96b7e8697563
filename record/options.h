#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/writer.h"
#include "record/switch_output.h"

namespace ebprof::record {

struct RecordOptions {
  std::string output = "ebprof.data";
  std::string event = "cpu-clock";  // -e
  uint64_t frequency = 99;          // -F; used unless -c sets a period
  bool frequency_given = false;     // -F was on the command line
  uint64_t period = 0;              // -c
  bool all_cpus = false;            // -a: explicit system-wide, also with a command
  std::vector<uint32_t> pids;
  std::vector<uint32_t> tids;  // -t
  std::string cgroup;          // --cgroup: a cgroup v2 directory, or a path under /sys/fs/cgroup
  std::string cpu_list;        // -C: e.g. "0-3,8"; empty: every online CPU
  double duration_s = 0;       // 0: until the command exits or a signal
  std::vector<std::string> command;
  bool quiet = false;            // -q: no status line, no summary
  format::WriterOptions writer;  // compression
  bool embed_symbols = true;
  bool python = true;              // read CPython processes' frames (--no-python: not)
  std::string transport = "auto";  // auto, ringbuf or perfbuf
  size_t mmap_pages = 0;           // -m: buffer pages per CPU; 0 sizes them from -F
  // --call-graph fp|dwarf[,SIZE]: frame pointers, or also SIZE bytes of user
  // stack and the registers per sample, unwound offline.
  format::CallGraph call_graph = format::CallGraph::kFramePointer;
  uint32_t user_stack_bytes = 8192;
  std::vector<std::string> argv;  // ebprof-record's own, for the file header
  // --off-cpu: threads' time off CPU too (--off-cpu-only: that alone).
  bool off_cpu = false;
  bool off_cpu_only = false;
  uint64_t min_block_us = 1;          // --min-block, like offcputime -m
  uint64_t max_block_us = 0;          // --max-block (0: no limit), like offcputime -M
  std::string states = "all";         // --state: R, S, D, I, other
  bool user_threads_only = false;     // --user-threads-only
  bool kernel_threads_only = false;   // --kernel-threads-only
  std::string off_cpu_hook = "auto";  // --off-cpu-hook: auto (probed), tp_btf, raw_tp, tracepoint
  bool wakers = false;                // --wakers: who woke each blocked thread
  bool verbose = false;  // -v: libbpf's log, the verifier's included, and the summary's detail
  // --switch-output[=signal|SIZE|TIME]: a new file now and then, the old
  // one renamed FILE.<UTC time>; --switch-max-files: how many are kept.
  std::optional<SwitchOutput> switch_output;
  uint32_t switch_max_files = 0;
  // --flight-recorder=DURATION: only the last DURATION kept, in memory (at
  // most --flight-recorder-size), written out on SIGUSR2 and at the end.
  uint64_t flight_recorder_ns = 0;
  uint64_t flight_recorder_bytes = uint64_t{256} << 20;
};

}  // namespace ebprof::record
