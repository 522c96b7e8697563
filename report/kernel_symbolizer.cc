#include "report/kernel_symbolizer.h"

#include <algorithm>

#include "format/lookup.h"
#include "report/text.h"

namespace ebprof::report {

KernelSymbolizer::KernelSymbolizer(std::vector<format::KernelSymbol> symbols, bool hidden)
    : symbols_(std::move(symbols)), hidden_(hidden) {
  std::stable_sort(symbols_.begin(), symbols_.end(),
                   [](const auto& a, const auto& b) { return a.address < b.address; });
}

Frame KernelSymbolizer::resolve(uint64_t address, uint64_t lookup) const {
  Frame f = name(address, lookup);
  // The kernel image is its own "file": its offsets are its addresses.
  f.address = f.file_offset = address;
  return f;
}

Frame KernelSymbolizer::name(uint64_t address, uint64_t lookup) const {
  const format::KernelSymbol* symbol = format::kernel_symbol_at_or_below(symbols_, lookup);
  auto unknown = [&](const std::string& why, const std::string& reason) {
    Frame f{"[unknown] (" + hex(address) + ", " + why + ")", "[kernel.kallsyms]", true, false};
    f.reason = reason;
    return f;
  };
  if (!symbol) {
    if (hidden_)
      return unknown("kernel addresses hidden", "kernel addresses hidden");
    return symbols_.empty() ? unknown("no kallsyms recorded", "no kallsyms recorded")
                            : unknown("below every kernel symbol", "no kernel symbol");
  }
  if (!format::covers(*symbol, lookup))
    return unknown("past " + symbol->name, "no kernel symbol");
  std::string module = symbol->module.empty() ? "[kernel.kallsyms]" : "[" + symbol->module + "]";
  return Frame{symbol->name, module,      true, true, 0, address - symbol->address,
               module,       symbol->name};
}

}  // namespace ebprof::report
