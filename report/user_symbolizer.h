#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include "common/elf_file.h"
#include "format/recording.h"
#include "report/debuginfo.h"
#include "report/dwarf_lines.h"
#include "report/frame.h"

namespace ebprof::report {

struct SymbolizeOptions {
  SymbolSources sources;
  bool demangle = true;
  bool lines = false;  // append "file.cc:123" to names that DWARF places (--lines)
  // Functions inlined at an address as frames of their own, from DWARF
  // (--no-inline turns it off, like perf's: then DWARF is read only for
  // --lines, and ELF symbols alone name frames, as in perf script).
  bool inline_frames = true;
  // Off-CPU stacks with who woke them (--wakers), offwaketime-style.
  bool wakers = false;
  // Told once per binary found on disk whose build-id is not the recorded
  // one (a rebuild, an upgrade): it is never used for names.
  std::function<void(const std::string& message)> warn;
  // Asked for debuginfo found nowhere locally (DEBUGINFOD_URLS); may be null.
  // Returns a local path or "" (Debuginfod::find_debuginfo, or a fake).
  std::function<std::string(const std::string& build_id)> debuginfod;
};

// Names user-space addresses through the process's recorded mappings, from
// the best source with the recorded build-id: separate debuginfo (by
// build-id, then .gnu_debuglink), else the binary at its recorded path
// (under --symfs), else the table embedded in the recording. Each file is
// opened once; each symbol is demangled once.
class UserSymbolizer {
 public:
  // `embedded` (by raw build-id) and `jit` (by pid, sorted) must outlive the
  // symbolizer.
  UserSymbolizer(const std::unordered_map<std::string, ElfSymbolTable>& embedded,
                 const std::unordered_map<uint32_t, std::vector<ElfSymbol>>& jit,
                 SymbolizeOptions options = {});

  // The JIT symbols of the recording (source) whose frames come next: one
  // symbolizer serves every source of a report, so that each file is
  // opened, and each server asked, once per report. Pids are per source.
  void use_jit(const std::unordered_map<uint32_t, std::vector<ElfSymbol>>& jit) { jit_ = &jit; }

  // `captures` are the process's maps captures from the one in effect at the
  // sample's time onwards: the first that maps the address is used, so code
  // mapped after a capture (libraries loaded at start-up, dlopen) is still
  // found, while the capture in effect wins when a range was reused.
  // `lookup` is the address to search for (a return address minus one for
  // caller frames, so a call at the very end of a function still names it);
  // `address` is what is shown when it cannot be named.
  Frame resolve(std::span<const format::ProcessInfo> captures, uint64_t address, uint64_t lookup);

  // Like resolve(), but with DWARF at hand (separate debuginfo, or the
  // binary's own) the functions inlined at the address come first, each its
  // own frame, and every frame has its file and line.
  void resolve_all(std::span<const format::ProcessInfo> captures, uint64_t address, uint64_t lookup,
                   std::vector<Frame>& out);

 private:
  // The tables for a mapping, or null and why there are none: where its
  // symbols come from, and where its load segments do (separate debuginfo
  // keeps the symbols but not the segments' file offsets).
  struct Choice {
    const ElfSymbolTable* table = nullptr;
    const ElfSymbolTable* layout = nullptr;
    const ElfSymbolTable* embedded = nullptr;  // the recording's own table, if any
    std::string dwarf;                         // the file to read DWARF from, if any
    std::string why;
  };
  // Where resolve() found an address: the choice for its mapping and the
  // ELF virtual address, for the DWARF lookup.
  struct Located {
    const Choice* choice = nullptr;
    uint64_t vaddr = 0;
  };
  Frame resolve(std::span<const format::ProcessInfo> captures, uint64_t address, uint64_t lookup,
                Located* located);
  Frame name(std::span<const format::ProcessInfo> captures, uint64_t address, uint64_t lookup,
             Located* located);
  const std::vector<SourceFrame>& source_frames(const std::string& file, uint64_t vaddr);
  const Choice& choose(const format::Mapping& m);
  const ElfSymbolTable* file(const std::string& path);
  bool matches_locally(const std::vector<std::string>& candidates, const std::string& build_id);

  const std::string& name_of(const ElfSymbol& sym);
  // JIT code: named from the process's perf map, if it was recorded.
  std::optional<Frame> resolve_jit(uint32_t pid, uint64_t address, uint64_t lookup);

  const std::unordered_map<std::string, ElfSymbolTable>& embedded_;
  const std::unordered_map<uint32_t, std::vector<ElfSymbol>>* jit_;
  SymbolizeOptions options_;
  // Each query can take seconds, and a recording decides how many build-ids
  // there are: a report asks servers about so many binaries at most.
  static constexpr int kMaxDebuginfodQueries = 200;
  int debuginfod_queries_ = 0;
  std::unordered_map<std::string, std::unique_ptr<ElfSymbolTable>> files_;  // null: unreadable
  std::map<std::pair<std::string, std::string>, Choice> choices_;           // by (path, build-id)
  std::unordered_map<const ElfSymbol*, std::string> demangled_;
  std::unordered_map<std::string, std::optional<DwarfLines>> dwarf_;  // by path; empty: none
  std::map<std::pair<std::string, uint64_t>, std::vector<SourceFrame>> source_;
};

}  // namespace ebprof::report
