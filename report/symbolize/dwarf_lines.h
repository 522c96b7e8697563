#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "report/symbolize/inflated_cache.h"
#include "report/symbolize/inflated_elf.h"

// libdwfl's handles, declared as libdwfl.h does so that includers need no
// elfutils headers.
struct Dwfl;
struct Dwfl_Module;

namespace ebprof::report {

// One source-level frame at an address.
struct SourceFrame {
  // As the DWARF names it: DW_AT_linkage_name when present (mangled C++),
  // else DW_AT_name; never demangled. Empty when the DWARF has a line for the
  // address but no function around it (assembly).
  std::string function;
  std::string file;      // source file, as DWARF names it (usually absolute)
  int line = 0;          // 0 when unknown
  bool inlined = false;  // this function was inlined into the next frame
  bool operator==(const SourceFrame&) const = default;
};

// The DWARF of one ELF executable or shared object, or of its separate
// debuginfo file, opened once. Looks in that file only: finding separate
// debuginfo is the caller's job. Not thread-safe: libdw loads lazily.
class DwarfLines {
 public:
  // nullopt when `path` is not a readable regular ELF executable or shared
  // object, or has no DWARF units (.debug_info). Compressed sections are
  // read inflated from `cache`, or inflated and kept there.
  static std::optional<DwarfLines> open(const std::string& path, const InflatedCache& cache = {});

  // The frames at `vaddr`, an ELF virtual address of the file (as in its
  // symbol table, PIE or not): the innermost inlined function first, the
  // out-of-line function containing them last. Each frame's file:line is
  // where execution is in that function: the line table's row for the
  // innermost, the call site (DW_AT_call_file/line) of the inlined instance
  // it contains for each caller. Empty when no DWARF covers `vaddr`.
  std::vector<SourceFrame> frames(uint64_t vaddr);

  DwarfLines(DwarfLines&&) noexcept;
  DwarfLines& operator=(DwarfLines&&) noexcept;
  ~DwarfLines();

 private:
  struct DwflEnd {
    void operator()(Dwfl* dwfl) const;
  };
  using DwflHandle = std::unique_ptr<Dwfl, DwflEnd>;

  DwarfLines(std::unique_ptr<ElfImage> image, DwflHandle dwfl, Dwfl_Module* module, uint64_t bias);

  std::unique_ptr<ElfImage> image_;  // the file's inflated copy, if read from one; outlives dwfl_
  DwflHandle dwfl_;
  Dwfl_Module* module_ = nullptr;  // owned by dwfl_
  uint64_t bias_ = 0;              // module address minus ELF virtual address
  // Which function or inlined instance each address is in, per unit.
  struct Functions;
  std::unique_ptr<Functions> functions_;
};

}  // namespace ebprof::report
