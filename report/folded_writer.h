#pragma once

#include <ostream>
#include <vector>

#include "report/symbolizer.h"

namespace ebprof::report {

// Folded stacks as flamegraph.pl and speedscope read them: one line per
// distinct call chain, "comm;root;...;leaf COUNT", sorted.
void write_folded(std::ostream& out, const std::vector<SymbolizedStack>& stacks);

}  // namespace ebprof::report
