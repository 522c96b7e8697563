#pragma once

#include <cstdint>
#include <vector>

#include "format/recording.h"
#include "report/frame.h"

namespace ebprof::report {

// Names kernel addresses from the kallsyms symbols in the recording, each
// within its recorded size: an address past every symbol's end (code loaded
// after recording started, a gap) stays unknown.
class KernelSymbolizer {
 public:
  // `hidden`: kptr_restrict hid kallsyms when recording, which is then why
  // kernel frames have no names.
  explicit KernelSymbolizer(std::vector<format::KernelSymbol> symbols, bool hidden = false);
  // `lookup` is the address to search for (a return address minus one for
  // caller frames); `address` is the recorded one, shown and offset from.
  Frame resolve(uint64_t address, uint64_t lookup) const;

 private:
  Frame name(uint64_t address, uint64_t lookup) const;

  std::vector<format::KernelSymbol> symbols_;  // ascending address
  bool hidden_ = false;
};

}  // namespace ebprof::report
