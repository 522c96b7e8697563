#include "common/dwarf_cfi.h"

#include <dwarf.h>

namespace ebprof {
namespace {

int no_elf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) {
  return -1;
}

int no_separate_debuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*,
                          GElf_Word, char**) {
  return -1;
}

const Dwfl_Callbacks kOffline = {
    .find_elf = no_elf,
    .find_debuginfo = no_separate_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

}  // namespace

std::optional<CfaRule> cfa_rule(const Dwarf_Op* ops, size_t nops) {
  if (nops != 1)
    return std::nullopt;
  if (ops[0].atom == DW_OP_bregx)
    return CfaRule{static_cast<unsigned>(ops[0].number), static_cast<int64_t>(ops[0].number2)};
  if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31)
    return CfaRule{static_cast<unsigned>(ops[0].atom - DW_OP_breg0),
                   static_cast<int64_t>(ops[0].number)};
  return std::nullopt;
}

const Dwfl_Callbacks& offline_callbacks() {
  return kOffline;
}

}  // namespace ebprof
