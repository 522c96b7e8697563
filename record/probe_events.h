#pragma once

#include <filesystem>
#include <string>

#include "record/perf_events.h"

namespace ebprof::record {

// Parses and checks tracepoint:CATEGORY:NAME (or CATEGORY:NAME),
// uprobe:PATH:SYMBOL and kprobe:SYMBOL against this machine: tracefs is
// mounted if it is not, the tracepoint, binary and symbol must exist, and
// kprobes must be available. Throws Error saying what is missing and what
// to use instead.
EventSpec find_probe_event(const std::string& name);

// Where tracefs is, mounting it at its usual place when it is nowhere: a
// fresh machine often has it unmounted, and libbpf needs it to attach
// tracepoints. Throws Error when it cannot be mounted.
std::filesystem::path tracefs();

}  // namespace ebprof::record
