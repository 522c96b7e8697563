#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include "common/elf_file.h"
#include "format/recording.h"
#include "report/frame.h"

namespace ebprof::report {

// Names user-space addresses through the process's recorded mappings and the
// ELF file at each mapping's path. Each file is opened once; each symbol is
// demangled once.
class UserSymbolizer {
 public:
  // `captures` are the process's maps captures from the one in effect at the
  // sample's time onwards: the first that maps the address is used, so code
  // mapped after a capture (libraries loaded at start-up, dlopen) is still
  // found, while the capture in effect wins when a range was reused.
  // `lookup` is the address to search for (a return address minus one for
  // caller frames, so a call at the very end of a function still names it);
  // `address` is what is shown when it cannot be named.
  Frame resolve(std::span<const format::ProcessInfo> captures, uint64_t address, uint64_t lookup);

 private:
  struct Binary {
    std::unique_ptr<ElfSymbolTable> table;  // null when it could not be loaded
    std::string error;
  };
  const Binary& binary(const std::string& path);

  std::unordered_map<std::string, Binary> binaries_;
  std::unordered_map<const ElfSymbol*, std::string> demangled_;
};

}  // namespace ebprof::report
