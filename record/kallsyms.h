#pragma once

#include <string_view>
#include <vector>

#include "format/recording.h"

namespace ebprof::record {

// Text symbols (types t, T, w, W) of /proc/kallsyms-formatted `text`, sorted
// by address. Malformed lines are skipped.
std::vector<format::KernelSymbol> parse_kallsyms(std::string_view text);

// True when every address is zero: kernel.kptr_restrict hides them from us.
bool kallsyms_hidden(const std::vector<format::KernelSymbol>& symbols);

// Reads and parses /proc/kallsyms.
std::vector<format::KernelSymbol> read_kallsyms();

}  // namespace ebprof::record
