#pragma once

#include <cstddef>
#include <ostream>
#include <vector>

#include "report/profile.h"
#include "report/symbolizer.h"

namespace ebprof::report {

struct TopOptions {
  size_t rows = 20;  // 0: all
};

// A table like `perf report --stdio --no-children`: self samples per
// (command, shared object, symbol) of the leaf frame, most first.
void write_top(std::ostream& out, const Profile& profile,
               const std::vector<SymbolizedStack>& stacks, const TopOptions& options);

}  // namespace ebprof::report
