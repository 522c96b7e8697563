#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "format/contents.h"

namespace ebprof::record {

// What RawSample::user_regs are, as DWARF numbers them (x86-64): rip, rsp,
// rbp, rbx, r10, r12-r15 (bpf/profile.h's order).
inline constexpr uint16_t kUserRegisterNumbers[] = {
    format::kDwarfRip, format::kDwarfRsp, format::kDwarfRbp, 3, 10, 12, 13, 14, 15};
inline constexpr size_t kUserStackPointer = 1;  // rsp's index

// One ring-buffer record, checked and viewed in place. The spans and comm
// point into the record's bytes and live as long as they do.
struct RawSample {
  uint64_t time_ns = 0;
  uint32_t tgid = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;
  bool off_cpu = false;        // an interval off CPU, ended at time_ns
  bool waker_follows = false;  // off CPU: the next record from its CPU is its waker's
  bool waker = false;          // who woke thread `peer`: the stack is the waker's
  // A thread's registers and stack as it left the CPU (--off-cpu): those
  // of its interval, whose record comes when it runs again.
  bool switch_window = false;
  uint32_t peer = 0;
  uint64_t blocked_ns = 0;  // off CPU: how long
  uint64_t period = 0;      // a perf event's sample: the events it stands for; 0: one
  uint8_t state = 0;        // off CPU: format::BlockState
  uint64_t cgroup_id = 0;   // cgroup v2 id; 0: none
  std::string_view comm;
  std::span<const uint64_t> kernel;  // leaf first
  std::span<const uint64_t> user;    // leaf first
  // CPython frames, innermost first, two words each (format::Stack::python),
  // and how their walk ended.
  std::span<const uint64_t> python;
  format::PythonEnd python_end = format::PythonEnd::kNone;
  bool holds_gil = false;  // the thread held its interpreter's GIL
  // Frame-pointer mode: BPF copied the stack because it does not know yet
  // whether the code at the user rip needs it; `image` is the task's
  // address space, as ebprof_code_key names it.
  bool code_unknown = false;
  uint32_t image = 0;
  // --call-graph dwarf: the user registers (bpf/profile.h's order) and
  // the user stack from the stack pointer up; empty without.
  format::UserAbi user_abi = format::UserAbi::kUnknown;
  std::span<const uint64_t> user_regs;
  std::span<const std::byte> user_stack;
};

// Decodes the struct ebprof_sample in `bytes`, or nullopt when its size or
// frame counts do not add up (never trust a length read from a buffer). The
// ring buffer hands out 8-byte aligned records, which the spans rely on.
std::optional<RawSample> decode_sample(std::span<const std::byte> bytes);

}  // namespace ebprof::record
