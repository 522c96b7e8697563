#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "report/symbolizer.h"

namespace ebprof::report {

// What to keep of each symbolized stack: a half of it, the stacks through a
// shared object or a function (like pprof's focus).
struct StackFilter {
  bool kernel_only = false;
  bool user_only = false;
  std::vector<std::string> dsos;     // module names as the report shows them (libc.so.6)
  std::optional<std::regex> symbol;  // keep stacks with a frame whose name matches
};

// Applies `filter` to `stacks`: frames of the other half are dropped (and
// stacks left empty with them), and stacks without a matching frame go.
void filter_stacks(const StackFilter& filter, std::vector<SymbolizedStack>& stacks);

}  // namespace ebprof::report
