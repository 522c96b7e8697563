#pragma once

#include <cstdint>
#include <span>

#include "format/contents.h"
#include "report/model/frame.h"

namespace ebprof::report {

// Names a kernel address from the recording's kallsyms `symbols` (sorted
// by address), each within its recorded size: an address past every
// symbol's end (code loaded after recording started, a gap) stays unnamed.
// `hidden`: kptr_restrict hid kallsyms when recording, which is then why.
// `lookup` is the address to search for (a return address minus one for
// caller frames); `address` is the recorded one, shown and offset from.
Frame name_kernel_address(std::span<const format::KernelSymbol> symbols, bool hidden,
                          uint64_t address, uint64_t lookup);

}  // namespace ebprof::report
