#pragma once

// What both binaries read of DWARF through libdw: the rule for a call
// frame's CFA as compiled code nearly always has it (the recorder's leaf
// repair, the report's step rules), and a Dwfl that looks for no file
// itself (the report's unwinding and naming decide which file is read).

#include <elfutils/libdwfl.h>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace ebprof {

// The CFA as register + offset.
struct CfaRule {
  unsigned base_register = 0;  // its DWARF number
  int64_t offset = 0;
};

// The rule libdw gives for a frame's CFA (dwarf_frame_cfa), when it is a
// register plus an offset: nullopt for a DWARF expression of any other kind.
std::optional<CfaRule> cfa_rule(const Dwarf_Op* ops, size_t nops);

// Callbacks for dwfl_begin() under which libdwfl opens only the files it
// is given: its standard ones would search /usr/lib/debug and ask
// debuginfod servers, making answers depend on the machine. They live as
// long as the program, as a Dwfl keeps a pointer to them.
const Dwfl_Callbacks& offline_callbacks();

}  // namespace ebprof
