#pragma once

// Naming user-space addresses: a process's recorded mappings say which
// file an address is in, FileFinder finds that file's tables, and ELF
// symbols, DWARF (inlined functions, source lines) and the process's JIT
// perf map name it. Each symbol is demangled once.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/elf_file.h"
#include "format/contents.h"
#include "report/locate/file_finder.h"
#include "report/locate/options.h"
#include "report/model/frame.h"
#include "report/symbolize/dwarf_files.h"
#include "report/symbolize/dwarf_lines.h"

namespace ebprof::report {

// What one process's addresses are named from: its maps captures from the
// one in effect at the sample's time onwards (the first that maps an
// address is used, so code mapped after a capture, by start-up or dlopen,
// is still found, while the capture in effect wins where a range was
// reused), the JIT symbols of its perf map (sorted; null when none), and
// the symbol tables its recording embeds.
struct ProcessSymbols {
  std::span<const format::ProcessInfo> captures;
  const std::vector<ElfSymbol>* jit = nullptr;
  const EmbeddedTables* embedded = nullptr;
  const format::RecordingInfo* recording = nullptr;  // where and when it was recorded
};

class UserNames {
 public:
  UserNames(const SymbolizeOptions& options, FileFinder& files);

  // Appends the frames at `address` of `space`: with DWARF at hand the
  // functions inlined there first, each its own frame, then the function
  // they are in. `lookup` is the address to search for (a return address
  // minus one for caller frames, so a call at the very end of a function
  // still names it); `address` is what is shown.
  void name(const ProcessSymbols& space, uint64_t address, uint64_t lookup,
            std::vector<Frame>& out);

  // Starts getting ready what name() will read for `lookup`: asks the
  // debuginfod servers for its binary's debuginfo, or opens the DWARF
  // found locally, for it to be there by then.
  void prefetch(const ProcessSymbols& space, uint64_t lookup);

  // The one frame at `address`, ELF symbols only.
  Frame name_one(const ProcessSymbols& space, uint64_t address, uint64_t lookup);

 private:
  // Where an address was found: the binary's files and the ELF virtual
  // address, for the DWARF lookup.
  struct Located {
    const FoundBinary* binary = nullptr;
    uint64_t vaddr = 0;
  };
  Frame name_in_file(const ProcessSymbols& space, const format::Mapping& m, uint64_t address,
                     uint64_t lookup, Located* located);
  Frame locate(const ProcessSymbols& space, uint64_t address, uint64_t lookup, Located* located);
  const std::vector<SourceFrame>& source_frames(const std::string& file, uint64_t vaddr);
  const std::string& name_of(const ElfSymbol& sym);

  const SymbolizeOptions& options_;
  FileFinder& files_;
  std::unordered_map<const ElfSymbol*, std::string> demangled_;
  DwarfFiles dwarf_;
  std::unordered_set<const format::Mapping*> prefetched_;  // mappings prefetch() saw
  std::map<std::pair<std::string, uint64_t>, std::vector<SourceFrame>> source_;
};

// Why an address is in none of a process's mappings, from the capture's
// maps_error: the recorder's own words, or kNoMapping.
UnnamedReason unmapped_reason(const std::string& maps_error);

}  // namespace ebprof::report
