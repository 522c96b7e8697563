#pragma once

// What one step of a walk up the stack does at an address, in the form the
// call frame information of compiled code nearly always takes: the CFA is
// rsp or rbp plus an offset, the return address and rbp are saved at
// offsets from it (or rbp is left alone). libdwfl re-reads an FDE and
// recomputes every register at every step of every walk; a rule read once
// per address makes a step two memory reads. Anything else (a signal
// frame, a DWARF expression, no CFI at all) is left to libdwfl.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>

struct Dwfl;
struct Dwarf_Frame_s;
using Dwarf_Frame = Dwarf_Frame_s;

namespace ebprof::report {

struct StepRule {
  enum class Base : uint8_t { kRsp, kRbp };
  enum class Rbp : uint8_t {
    kSame,   // the caller's is this frame's
    kSaved,  // at CFA + rbp_at
    kLost,   // undefined: the caller's cannot be known
  };
  Base cfa_base = Base::kRsp;
  Rbp rbp = Rbp::kSame;
  bool outermost = false;  // no return address: the thread's first frame
  int64_t cfa_offset = 0;
  int64_t ra_at = 0;  // the return address is at CFA + ra_at
  int64_t rbp_at = 0;
};

class StepRules {
 public:
  explicit StepRules(Dwfl* dwfl) : dwfl_(dwfl) {}

  // The rule at `pc` (what to look up: the sampled instruction for the
  // first frame, a return address - 1 for the others), from the module's
  // .eh_frame or else its .debug_frame, like libdwfl; nullopt where it is
  // not that simple.
  const std::optional<StepRule>& at(uint64_t pc);

  // Whether the CFI at `pc` holds a DWARF expression no walk should
  // evaluate: one that branches (DW_OP_skip, DW_OP_bra: it can loop, and
  // libdwfl bounds neither its steps nor its stack) or has more than
  // kMaxExpressionOps operations. Compilers write neither; a hostile
  // binary's embedded CFI can, and cost a report CPU-hours.
  bool costly(uint64_t pc);
  static constexpr size_t kMaxExpressionOps = 64;

 private:
  // The FDE row at `pc`, from the module's .eh_frame or else its
  // .debug_frame, like libdwfl; null where there is none.
  struct FreeFrame {
    void operator()(Dwarf_Frame* frame) const;
  };
  std::unique_ptr<Dwarf_Frame, FreeFrame> frame_at(uint64_t pc) const;
  std::optional<StepRule> read(uint64_t pc) const;

  Dwfl* dwfl_;
  std::unordered_map<uint64_t, std::optional<StepRule>> rules_;
  std::unordered_map<uint64_t, bool> costly_;
  // The hot addresses of a profile are few: a direct-mapped cache of
  // rules_ answers most lookups without hashing into it.
  struct Recent {
    uint64_t pc = 0;
    const std::optional<StepRule>* rule = nullptr;
  };
  std::array<Recent, 4096> recent_{};
};

}  // namespace ebprof::report
