#pragma once

#include <string>

#include "record/perf_events.h"

namespace ebprof::record {

// Parses and checks tracepoint:CATEGORY:NAME (or CATEGORY:NAME),
// uprobe:PATH:SYMBOL and kprobe:SYMBOL against this machine: tracefs is
// mounted if it is not, the tracepoint, binary and symbol must exist, and
// kprobes must be available. Throws Error saying what is missing and what
// to use instead.
EventSpec find_probe_event(const std::string& name);

}  // namespace ebprof::record
