#include "report/kernel_symbolizer.h"

#include <algorithm>

#include "format/lookup.h"
#include "report/text.h"

namespace ebprof::report {

KernelSymbolizer::KernelSymbolizer(std::vector<format::KernelSymbol> symbols)
    : symbols_(std::move(symbols)) {
  std::stable_sort(symbols_.begin(), symbols_.end(),
                   [](const auto& a, const auto& b) { return a.address < b.address; });
}

Frame KernelSymbolizer::resolve(uint64_t address, uint64_t lookup) const {
  const format::KernelSymbol* symbol = format::kernel_symbol_at_or_below(symbols_, lookup);
  if (!symbol) {
    const char* why = symbols_.empty() ? "no kallsyms recorded" : "below every kernel symbol";
    return Frame{"[unknown] (" + hex(address) + ", " + why + ")", "[kernel.kallsyms]", true, false};
  }
  if (!format::covers(*symbol, lookup))
    return Frame{"[unknown] (" + hex(address) + ", past " + symbol->name + ")", "[kernel.kallsyms]",
                 true, false};
  std::string module = symbol->module.empty() ? "[kernel.kallsyms]" : "[" + symbol->module + "]";
  return Frame{symbol->name, module,      true, true, 0, address - symbol->address,
               module,       symbol->name};
}

}  // namespace ebprof::report
