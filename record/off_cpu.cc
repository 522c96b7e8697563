#include "record/off_cpu.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <sstream>

#include "common/error.h"
#include "common/unique_fd.h"
#include "format/contents.h"

namespace ebprof::record {
namespace {

struct BtfFree {
  void operator()(btf* b) const { btf__free(b); }
};

std::unique_ptr<btf, BtfFree> vmlinux_btf() {
  return std::unique_ptr<btf, BtfFree>(btf__load_vmlinux_btf());
}

// "return 0": enough to ask whether a program of this kind loads and
// attaches here.
constexpr bpf_insn kReturnZero[] = {
    {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
    {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
};

bool attaches(bpf_prog_type type, bpf_attach_type attach, uint32_t btf_id, const char* raw_name) {
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach, .attach_btf_id = btf_id);
  UniqueFd prog(bpf_prog_load(type, nullptr, "GPL", kReturnZero, 2, &opts));
  if (!prog)
    return false;
  UniqueFd link(bpf_raw_tracepoint_open(raw_name, prog.get()));
  return static_cast<bool>(link);
}

}  // namespace

const char* switch_hook_name(SwitchHook hook) {
  switch (hook) {
    case SwitchHook::kBtfTracepoint:
      return "tp_btf/sched_switch";
    case SwitchHook::kRawTracepoint:
      return "raw_tp/sched_switch";
    case SwitchHook::kTracepoint:
      return "tracepoint/sched/sched_switch";
  }
  return "";
}

bool switch_hook_attaches(SwitchHook hook) {
  switch (hook) {
    case SwitchHook::kBtfTracepoint: {
      auto b = vmlinux_btf();
      int id = b ? btf__find_by_name_kind(b.get(), "btf_trace_sched_switch", BTF_KIND_TYPEDEF) : -1;
      return id > 0 &&
             attaches(BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP, static_cast<uint32_t>(id), nullptr);
    }
    case SwitchHook::kRawTracepoint:
      // Raw tracepoint programs take no attach type: 0.
      return attaches(BPF_PROG_TYPE_RAW_TRACEPOINT, static_cast<bpf_attach_type>(0), 0,
                      "sched_switch");
    case SwitchHook::kTracepoint:
      // Attached, with its own errors, by the sampler.
      return true;
  }
  return false;
}

SwitchHook probe_switch_hook() {
  for (SwitchHook hook : {SwitchHook::kBtfTracepoint, SwitchHook::kRawTracepoint})
    if (switch_hook_attaches(hook))
      return hook;
  return SwitchHook::kTracepoint;
}

SwitchHook parse_switch_hook(const std::string& name) {
  if (name == "tp_btf")
    return SwitchHook::kBtfTracepoint;
  if (name == "raw_tp")
    return SwitchHook::kRawTracepoint;
  if (name == "tracepoint")
    return SwitchHook::kTracepoint;
  throw Error("--off-cpu-hook " + name + ": use auto, tp_btf, raw_tp or tracepoint");
}

bool switch_passes_prev_state() {
  auto b = vmlinux_btf();
  if (!b)
    return false;
  int id = btf__find_by_name_kind(b.get(), "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
  if (id <= 0)
    return false;
  // typedef -> pointer -> function prototype (void *, preempt, prev, next[, prev_state]).
  const btf_type* t = btf__type_by_id(b.get(), btf__resolve_type(b.get(), id));
  if (!t || !btf_is_ptr(t))
    return false;
  t = btf__type_by_id(b.get(), t->type);
  return t && btf_is_func_proto(t) && btf_vlen(t) >= 5;
}

uint32_t parse_block_states(const std::string& list) {
  using format::BlockState;
  uint32_t mask = 0;
  std::istringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    auto bit = [](BlockState s) { return 1u << static_cast<int>(s); };
    if (name == "R")
      mask |= bit(BlockState::kRunnable);
    else if (name == "S")
      mask |= bit(BlockState::kSleeping);
    else if (name == "D")
      mask |= bit(BlockState::kUninterruptible);
    else if (name == "I")
      mask |= bit(BlockState::kIdle);
    else if (name == "other")
      mask |= bit(BlockState::kOther);
    else if (name == "all")
      mask |= (1u << format::kBlockStates) - 1;
    else
      throw Error("--state " + list + ": '" + name +
                  "' is not a state: use R (preempted), S (sleeping), D (uninterruptible), I "
                  "(idle kernel thread), other, or all");
  }
  if (!mask)
    throw Error("--state is empty: name at least one of R, S, D, I, other, or all");
  return mask;
}

}  // namespace ebprof::record
