#pragma once

#include <string>
#include <unordered_map>

#include "common/unique_fd.h"
#include "format/contents.h"

namespace ebprof::report {

// An ELF file in memory (a memfd) made of an embedded ElfCfi: its loadable
// segments (no bytes behind them: they only place the module) and its
// .eh_frame_hdr and .eh_frame at their addresses, which is all libdwfl's
// unwinder reads of a module. What a report unwinds with when the binary
// is gone. Throws Error when it cannot be made.
UniqueFd write_cfi_elf(const format::ElfCfi& cfi);

// One embedded table written out, once per build-id, for every address
// space that needs it: made again when more of its pieces (format 1.9)
// have come in, as they do over a recording.
struct CfiFile {
  UniqueFd fd;
  size_t pieces = 0;
};
using CfiFiles = std::unordered_map<std::string, CfiFile>;

// The CFI pieces `cfi` holds, all binaries': what grows as they come in.
size_t cfi_pieces(const std::unordered_map<std::string, format::ElfCfi>& cfi);

}  // namespace ebprof::report
