#pragma once

#include <cstdint>
#include <string>

namespace ebprof::record {

// How context switches are seen for --off-cpu, best first.
enum class SwitchHook {
  kBtfTracepoint,  // tp_btf/sched_switch: typed arguments, cheapest
  kRawTracepoint,  // raw_tp/sched_switch
  kTracepoint,     // the sched:sched_switch tracepoint (through tracefs)
};
const char* switch_hook_name(SwitchHook hook);  // "tp_btf/sched_switch", ...

// The best hook this kernel attaches, found by loading and attaching a
// trivial program of each kind in turn; the tracepoint, which needs tracefs,
// when neither BTF nor raw tracepoint programs attach.
SwitchHook probe_switch_hook();
// Whether `hook` attaches here (the tracepoint is taken to).
bool switch_hook_attaches(SwitchHook hook);
// --off-cpu-hook's names: tp_btf, raw_tp, tracepoint. Throws Error.
SwitchHook parse_switch_hook(const std::string& name);

// Whether this kernel's sched_switch passes prev_state (Linux 5.18+), read
// from its BTF: what __schedule() saw, more exact than the task's field.
bool switch_passes_prev_state();

// Parses --state: comma-separated R (preempted), S (sleeping), D
// (uninterruptible), I (idle kernel thread), other; "all". Returns the bit
// mask of format::BlockState values. Throws Error naming a bad one.
uint32_t parse_block_states(const std::string& list);

}  // namespace ebprof::record
