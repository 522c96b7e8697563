#pragma once

#include <cstdint>
#include <vector>

#include "format/recording.h"
#include "report/frame.h"

namespace ebprof::report {

// Names kernel addresses from the kallsyms snapshot in the recording. A
// symbol covers the addresses up to the next symbol's start.
class KernelSymbolizer {
 public:
  explicit KernelSymbolizer(std::vector<format::KernelSymbol> symbols);
  Frame resolve(uint64_t address) const;

 private:
  std::vector<format::KernelSymbol> symbols_;  // ascending address
};

}  // namespace ebprof::report
