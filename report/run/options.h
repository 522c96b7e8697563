#pragma once

// ebprof-report's command line as typed: what make_plan() resolves.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ebprof::report {

enum class Command : uint8_t { kReport, kInfo, kDump, kDiff, kMerge };

struct ReportOptions {
  Command command = Command::kReport;
  std::vector<std::string> inputs{"ebprof.data"};  // -i
  bool inputs_given = false;                       // -i was on the command line
  std::vector<std::string>
      files;                // the subcommand's own: info and dump FILE, diff BASE NEW, merge IN
  std::string output;       // -o
  uint64_t max_memory = 0;  // --max-memory; 0: default_memory_budget()
  std::string format = "top";
  std::string split;  // --split DURATION: one pprof per slice of wall-clock time, into -o DIR
  std::string labels = "pid,tid,comm,cpu,cgroup";  // --labels: of each pprof sample
  bool follow = false;  // --follow: redraw the top table as the recording grows
  // top
  size_t rows = 20;
  std::string sort = "comm,dso,symbol";
  bool children = false;
  bool no_children = false;  // --no-children: no Children column
  double percent_limit = 0;
  std::string call_graph;    // -g, --call-graph: perf's TYPE,MIN[,PRINT_LIMIT],ORDER[,KEY]
  bool inverted = false;     // -G: -g caller
  bool header = false;       // info before the report
  bool header_only = false;  // info instead of it
  // folded
  std::string prefix = "comm";
  bool annotate = false;
  bool delimit = false;
  // symbols
  std::string symfs;
  std::vector<std::string> debug_dirs = {"/usr/lib/debug"};
  double debuginfod_timeout_s = 30;
  std::string cache_dir;  // filled with default_cache_dir() by the command line
  bool no_cache = false;
  bool lines = false;
  bool no_demangle = false;
  bool no_inline = false;
  std::string unwind = "dwarf";  // dwarf: from stack windows where recorded; fp: the chain
  // filters and views
  std::vector<uint32_t> pids, tids, cpus;
  std::vector<std::string> comms;
  std::string time;
  bool include_idle = false;
  bool gil = false;  // --gil
  bool wakers = false;
  std::string view;
  std::string weight = "auto";
  bool kernel_only = false;
  bool user_only = false;
  std::vector<std::string> dsos;
  std::string symbol;
  size_t max_stack = 0;
  // diff
  std::string normalize = "total";
  std::string join = "symbol";
};

}  // namespace ebprof::report
