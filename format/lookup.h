#pragma once

// How a recording's addresses are looked up: the rules the recorder (which
// embeds what lookups will need) and the report (which does them) must
// share exactly.

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "format/contents.h"

namespace ebprof::format {

// The address to look up for frame `i` of a stack half (leaf first). Entry 0
// is the interrupted instruction; the others are return addresses, which
// point just past their call and can be past the end of the calling
// function, so they are looked up one byte earlier.
inline uint64_t lookup_address(std::span<const uint64_t> frames, size_t i) {
  return frames[i] - (i > 0);
}

// Puts mappings in the order find_mapping() needs: by start address.
inline void sort_by_start(std::vector<Mapping>& mappings) {
  std::sort(mappings.begin(), mappings.end(),
            [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
}

// The mapping of `mappings` (sorted by start, not overlapping) that holds
// `address`, or null.
inline const Mapping* find_mapping(const std::vector<Mapping>& mappings, uint64_t address) {
  auto it = std::upper_bound(mappings.begin(), mappings.end(), address,
                             [](uint64_t a, const Mapping& m) { return a < m.start; });
  return it != mappings.begin() && address < std::prev(it)->end ? &*std::prev(it) : nullptr;
}

// The last symbol of `symbols` (sorted by address) starting at or below
// `address`, or null; whether it covers the address is its size's to say.
inline const KernelSymbol* kernel_symbol_at_or_below(std::span<const KernelSymbol> symbols,
                                                     uint64_t address) {
  auto it = std::upper_bound(symbols.begin(), symbols.end(), address,
                             [](uint64_t a, const KernelSymbol& s) { return a < s.address; });
  return it == symbols.begin() ? nullptr : &*std::prev(it);
}

inline bool covers(const KernelSymbol& symbol, uint64_t address) {
  return address - symbol.address < symbol.size;
}

}  // namespace ebprof::format
