#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "report/profile.h"
#include "report/symbolizer.h"

namespace ebprof::report {

struct TopOptions {
  size_t rows = 20;                                           // 0: all
  std::vector<std::string> sort = {"comm", "dso", "symbol"};  // row keys, from parse_sort_keys
  bool children = false;  // order by children (total) rather than self
  bool time = false;      // counts are microseconds (--weight time), not samples
};

// perf's --sort list ("comm,dso,symbol"; also pid, tid, cpu), checked, with
// the symbol moved last. Throws Error naming an unknown key.
std::vector<std::string> parse_sort_keys(const std::string& list);

// A table like `perf report --stdio`: per row (the --sort keys of the leaf
// frame), self samples, and children: samples whose stack has a frame in
// the row anywhere. Most self first (like --no-children and pprof -top),
// or most children first. Percentages are of the samples shown (filters
// applied).
void write_top(std::ostream& out, const Profile& profile,
               const std::vector<SymbolizedStack>& stacks, const TopOptions& options);

}  // namespace ebprof::report
