#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "report/model/profile.h"
#include "report/write/call_graph.h"

namespace ebprof::report {

// What a row of the top table is told apart by (--sort).
enum class SortKey : uint8_t { kComm, kPid, kTid, kCpu, kCgroup, kDso, kState, kSymbol };

struct TopOptions {
  size_t rows = 20;  // 0: all
  std::vector<SortKey> sort = {SortKey::kComm, SortKey::kDso, SortKey::kSymbol};
  bool children = false;        // order by children (total) rather than self
  double percent_limit = 0;     // rows below this share (of what orders them) are left out
  CallGraphOptions call_graph;  // -g: under each row, the call paths of its self samples
  bool children_column = true;  // false with --no-children, as perf drops it
  // --follow: a recording without its end frame is being written, no alarm.
  bool following = false;
};

// perf's --sort list ("comm,dso,symbol", or perf's "sym"; also pid, tid,
// cpu, state),
// checked, with the symbol moved last. Throws Error naming an unknown key.
std::vector<SortKey> parse_sort_keys(const std::string& list);

// Whether rows tell threads or CPUs apart: the profile must keep them.
bool sorts_by_thread(const std::vector<SortKey>& keys);
// Whether rows tell cgroups apart: the profile must keep them.
bool sorts_by_cgroup(const std::vector<SortKey>& keys);

// A table like `perf report --stdio`: per row (the --sort keys of the leaf
// frame), self samples, and children: samples whose stack has a frame in
// the row anywhere. Most self first (like --no-children and pprof -top),
// or most children first. Percentages are of the samples shown (filters
// applied).
void write_top(std::ostream& out, const Profile& profile, const TopOptions& options);

}  // namespace ebprof::report
