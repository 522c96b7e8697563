#pragma once

#include "common/unique_fd.h"
#include "format/contents.h"

namespace ebprof::report {

// An ELF file in memory (a memfd) made of an embedded ElfCfi: its loadable
// segments (no bytes behind them: they only place the module) and its
// .eh_frame_hdr and .eh_frame at their addresses, which is all libdwfl's
// unwinder reads of a module. What a report unwinds with when the binary
// is gone. Throws Error when it cannot be made.
UniqueFd write_cfi_elf(const format::ElfCfi& cfi);

}  // namespace ebprof::report
