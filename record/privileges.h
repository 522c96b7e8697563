#pragma once

#include <string>

#include "common/error.h"

namespace ebprof::record {

// The error for a refused BPF or perf_event operation, naming what was
// refused and what grants it.
Error missing_privileges(const std::string& what);

}  // namespace ebprof::record
