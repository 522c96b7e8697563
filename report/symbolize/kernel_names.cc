#include "report/symbolize/kernel_names.h"

#include "format/lookup.h"

namespace ebprof::report {

Frame name_kernel_address(std::span<const format::KernelSymbol> symbols, bool hidden,
                          uint64_t address, uint64_t lookup) {
  // The kernel image is its own "file": its offsets are its addresses.
  Frame f{.kind = FrameKind::kKernel,
          .address = address,
          .file_offset = address,
          .module = "[kernel.kallsyms]"};
  const format::KernelSymbol* symbol = format::kernel_symbol_at_or_below(symbols, lookup);
  if (!symbol) {
    f.reason = hidden            ? UnnamedReason::kKernelAddressesHidden
               : symbols.empty() ? UnnamedReason::kNoKallsyms
                                 : UnnamedReason::kNoKernelSymbol;
    return f;
  }
  if (!format::covers(*symbol, lookup)) {
    f.reason = UnnamedReason::kNoKernelSymbol;
    f.name = symbol->name;  // what it is past
    return f;
  }
  if (!symbol->module.empty())
    f.module = "[" + symbol->module + "]";
  f.name = f.system_name = symbol->name;
  f.offset = address - symbol->address;
  return f;
}

}  // namespace ebprof::report
