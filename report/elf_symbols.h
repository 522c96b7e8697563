#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ebprof::report {

struct ElfSymbol {
  uint64_t address = 0;  // ELF virtual address
  uint64_t size = 0;
  std::string name;  // as in the file (mangled)
};

// The function symbols and loadable segments of one ELF file: what is needed
// to turn a sampled address into a name. The file is closed after loading.
class ElfSymbolTable {
 public:
  // Throws Error when the file is missing or not a readable ELF.
  static ElfSymbolTable load(const std::string& path);

  // The ELF virtual address at file offset `offset`, if a PT_LOAD segment
  // maps it. Mapping offsets come from /proc/PID/maps, so this is where PIE
  // and shared-library load bias cancels out.
  std::optional<uint64_t> offset_to_vaddr(uint64_t offset) const;

  // The function whose [address, address + size) holds `vaddr`. Symbols
  // without a size never match: a guess could name the wrong function.
  const ElfSymbol* find(uint64_t vaddr) const;

  size_t size() const { return symbols_.size(); }

 private:
  struct Segment {
    uint64_t offset, vaddr, file_size;
  };
  std::vector<Segment> segments_;
  std::vector<ElfSymbol> symbols_;  // ascending address, one per address
};

}  // namespace ebprof::report
