#include "report/kernel_symbolizer.h"

#include <algorithm>

#include "report/text.h"

namespace ebprof::report {

KernelSymbolizer::KernelSymbolizer(std::vector<format::KernelSymbol> symbols)
    : symbols_(std::move(symbols)) {
  std::stable_sort(symbols_.begin(), symbols_.end(),
                   [](const auto& a, const auto& b) { return a.address < b.address; });
}

Frame KernelSymbolizer::resolve(uint64_t address) const {
  auto it =
      std::upper_bound(symbols_.begin(), symbols_.end(), address,
                       [](uint64_t a, const format::KernelSymbol& s) { return a < s.address; });
  if (it == symbols_.begin()) {
    const char* why = symbols_.empty() ? "no kallsyms recorded" : "below every kernel symbol";
    return Frame{"[unknown] (" + hex(address) + ", " + why + ")", "[kernel.kallsyms]", true, false};
  }
  --it;
  if (address - it->address >= it->size)
    return Frame{"[unknown] (" + hex(address) + ", past " + it->name + ")", "[kernel.kallsyms]",
                 true, false};
  std::string module = it->module.empty() ? "[kernel.kallsyms]" : "[" + it->module + "]";
  return Frame{it->name, std::move(module), true, true};
}

}  // namespace ebprof::report
