#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include "common/elf_file.h"
#include "format/recording.h"
#include "report/frame.h"

namespace ebprof::report {

// Names user-space addresses through the process's recorded mappings: with
// the ELF file at the mapping's path when it is the build that ran, else with
// the symbol table the recording embedded for that build-id. Each file is
// opened once; each symbol is demangled once.
class UserSymbolizer {
 public:
  // `embedded` (by raw build-id) and `jit` (by pid, sorted) must outlive the
  // symbolizer.
  UserSymbolizer(const std::unordered_map<std::string, ElfSymbolTable>& embedded,
                 const std::unordered_map<uint32_t, std::vector<ElfSymbol>>& jit);

  // `captures` are the process's maps captures from the one in effect at the
  // sample's time onwards: the first that maps the address is used, so code
  // mapped after a capture (libraries loaded at start-up, dlopen) is still
  // found, while the capture in effect wins when a range was reused.
  // `lookup` is the address to search for (a return address minus one for
  // caller frames, so a call at the very end of a function still names it);
  // `address` is what is shown when it cannot be named.
  Frame resolve(std::span<const format::ProcessInfo> captures, uint64_t address, uint64_t lookup);

 private:
  // The table for a mapping, or null and why there is none.
  struct Choice {
    const ElfSymbolTable* table = nullptr;
    std::string why;
  };
  const Choice& choose(const format::Mapping& m);
  const ElfSymbolTable* file(const std::string& path);

  // JIT code: named from the process's perf map, if it was recorded.
  std::optional<Frame> resolve_jit(uint32_t pid, uint64_t address, uint64_t lookup);

  const std::unordered_map<std::string, ElfSymbolTable>& embedded_;
  const std::unordered_map<uint32_t, std::vector<ElfSymbol>>& jit_;
  std::unordered_map<std::string, std::unique_ptr<ElfSymbolTable>> files_;  // null: unreadable
  std::map<std::pair<std::string, std::string>, Choice> choices_;           // by (path, build-id)
  std::unordered_map<const ElfSymbol*, std::string> demangled_;
};

}  // namespace ebprof::report
