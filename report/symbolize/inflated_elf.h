#pragma once

// Debuginfo is usually shipped with its DWARF sections compressed
// (SHF_COMPRESSED), which libdw inflates whole, with zlib, when it opens
// the file: 10 MB for Debian's libc6-dbg, the longest step of a report
// on a small recording. libdeflate inflates the same bytes 2.7 times
// faster, and libdw 0.188 cannot read zstd-compressed sections at all.

#include <string>

#include "common/unique_fd.h"

namespace ebprof::report {

// A copy of the ELF file at `path`, in memory (a memfd), whose compressed
// sections are inflated: the original bytes, the inflated sections after
// them, and a section header table pointing there. An empty descriptor
// when there is nothing to inflate or anything looks wrong (not a 64-bit
// little-endian ELF file, a section that does not inflate to the size it
// claims, or claims more than a compressor can produce): libdw then reads
// the file itself, as before.
UniqueFd inflated_elf(const std::string& path);

}  // namespace ebprof::report
