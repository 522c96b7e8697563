#include "report/unwind/step_rules.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "common/dwarf_cfi.h"
#include "format/contents.h"

namespace ebprof::report {
namespace {

// The offset from the CFA where a register is saved, when its rule is
// DWARF's offset(N): libdw gives it as "CFA, plus N".
std::optional<int64_t> saved_at(const Dwarf_Op* ops, size_t nops) {
  if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa)
    return 0;
  if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst)
    return static_cast<int64_t>(ops[1].number);
  return std::nullopt;
}

std::optional<StepRule> rule_of(Dwarf_Frame* frame) {
  bool signal = false;
  if (dwarf_frame_info(frame, nullptr, nullptr, &signal) != static_cast<int>(format::kDwarfRip) ||
      signal)
    return std::nullopt;
  StepRule rule;
  Dwarf_Op* ops = nullptr;
  size_t nops = 0;
  if (dwarf_frame_cfa(frame, &ops, &nops) != 0)
    return std::nullopt;
  const std::optional<CfaRule> cfa = cfa_rule(ops, nops);
  if (!cfa || (cfa->base_register != format::kDwarfRsp && cfa->base_register != format::kDwarfRbp))
    return std::nullopt;
  rule.cfa_offset = cfa->offset;
  rule.cfa_base =
      cfa->base_register == format::kDwarfRsp ? StepRule::Base::kRsp : StepRule::Base::kRbp;

  // Undefined: *nops 0 with *ops the caller's array; same value: *ops null.
  Dwarf_Op mem[3];
  if (dwarf_frame_register(frame, format::kDwarfRip, mem, &ops, &nops) != 0)
    return std::nullopt;
  if (nops == 0 && ops == mem) {
    rule.outermost = true;
  } else if (auto at = saved_at(ops, nops)) {
    rule.ra_at = *at;
  } else {
    return std::nullopt;
  }
  if (dwarf_frame_register(frame, format::kDwarfRbp, mem, &ops, &nops) != 0)
    return std::nullopt;
  if (nops == 0) {
    rule.rbp = ops == nullptr ? StepRule::Rbp::kSame : StepRule::Rbp::kLost;
  } else if (auto at = saved_at(ops, nops)) {
    rule.rbp = StepRule::Rbp::kSaved;
    rule.rbp_at = *at;
  } else {
    return std::nullopt;
  }
  return rule;
}

}  // namespace

const std::optional<StepRule>& StepRules::at(uint64_t pc) {
  Recent& recent = recent_[(pc ^ (pc >> 12)) % recent_.size()];
  if (recent.rule && recent.pc == pc)
    return *recent.rule;
  auto [it, inserted] = rules_.try_emplace(pc);
  if (inserted)
    it->second = read(pc);
  recent = {pc, &it->second};
  return it->second;
}

void StepRules::FreeFrame::operator()(Dwarf_Frame* frame) const {
  std::free(frame);
}

std::unique_ptr<Dwarf_Frame, StepRules::FreeFrame> StepRules::frame_at(uint64_t pc) const {
  Dwfl_Module* module = dwfl_addrmodule(dwfl_, pc);
  if (!module)
    return nullptr;
  for (auto cfi_of : {dwfl_module_eh_cfi, dwfl_module_dwarf_cfi}) {
    Dwarf_Addr bias = 0;
    Dwarf_CFI* cfi = cfi_of(module, &bias);
    Dwarf_Frame* frame = nullptr;
    if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0)
      return std::unique_ptr<Dwarf_Frame, FreeFrame>(frame);
  }
  return nullptr;
}

std::optional<StepRule> StepRules::read(uint64_t pc) const {
  const auto frame = frame_at(pc);
  return frame ? rule_of(frame.get()) : std::nullopt;
}

bool StepRules::costly(uint64_t pc) {
  auto [it, inserted] = costly_.try_emplace(pc, false);
  if (!inserted)
    return it->second;
  const auto frame = frame_at(pc);
  if (!frame)
    return false;
  auto too_costly = [](const Dwarf_Op* ops, size_t nops) {
    return nops > kMaxExpressionOps || std::any_of(ops, ops + nops, [](const Dwarf_Op& op) {
             return op.atom == DW_OP_skip || op.atom == DW_OP_bra;
           });
  };
  Dwarf_Op* ops = nullptr;
  size_t nops = 0;
  if (dwarf_frame_cfa(frame.get(), &ops, &nops) == 0 && too_costly(ops, nops))
    return it->second = true;
  // Every register x86-64's unwinding reads, the return address last.
  for (int regno = 0; regno <= static_cast<int>(format::kDwarfRip); ++regno) {
    Dwarf_Op mem[3];
    if (dwarf_frame_register(frame.get(), regno, mem, &ops, &nops) == 0 && ops &&
        too_costly(ops, nops))
      return it->second = true;
  }
  return false;
}

}  // namespace ebprof::report
