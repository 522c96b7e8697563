#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/elf_file.h"
#include "format/contents.h"
#include "record/jit_maps.h"
#include "record/process_tracker.h"

namespace ebprof::record {

// Picks the ELF symbols a recording embeds: for each new stack, the function
// symbols its user frames fall in (caller frames looked up at address - 1,
// as the report does), each once per build-id. A binary's table is read once,
// from the very file mapped while the process is alive, else from its path
// if the build-id there is the same. Files without a build-id are not
// embedded: nothing could tell a reader which binary the symbols belong to.
class SymbolEmbedder {
 public:
  void take_new(uint32_t pid, std::span<const uint64_t> user, const ProcessTracker& tracker);
  // The symbols that the words of a copied stack (--call-graph dwarf) may
  // return into: each word that points into code of the process, looked
  // up as a return address. A superset of the frames an unwinder will find
  // there, cheap enough for the blocks of stack not seen before.
  void take_words(uint32_t pid, std::span<const std::byte> bytes, const ProcessTracker& tracker);

  // One frame's worth per binary with symbols not written yet.
  std::vector<format::EmbeddedSymbols> drain();
  // One frame's worth per process with JIT symbols not written yet.
  std::vector<format::JitSymbols> drain_jit();

  // Binaries with at least one symbol written.
  size_t binaries() const { return embedded_; }
  // Every symbol new again, tables kept: a new file (--switch-output)
  // embeds what its own samples need.
  void forget_taken();
  // Lets go of what it keeps of processes the tracker no longer knows,
  // once their JIT code found unnamed was looked up in their maps again
  // (a JVM writes its map as it exits with -XX:+DumpPerfMapAtExit).
  void forget_gone(const ProcessTracker& tracker);
  // At the end of a recording: JIT code found unnamed, looked up again in
  // the maps of the processes that ran it, alive or gone.
  void name_missed_jit();

 private:
  struct Binary {
    std::optional<ElfSymbolTable> table;  // empty when the file could not be read
    std::string path;
    std::vector<bool> taken;  // parallel to table->symbols()
    std::vector<ElfSymbol> pending;
    bool written = false;
  };
  Binary& binary(uint32_t pid, const format::Mapping& m);
  // The symbol `lookup` is in (an instruction, or a return address minus
  // one), if its binary has one there.
  void take(uint32_t pid, uint64_t lookup, const ProcessTracker& tracker);

  void take_jit(uint32_t pid, uint64_t ip, const ProcessTracker& tracker);
  void take_named_late(uint32_t pid);

  // Tables of binaries no sample took a symbol from in the file just ended
  // are let go at a switch; so many at most in any case, then all (their
  // symbols are then embedded again as needed).
  static constexpr size_t kMaxBinaries = 1024;
  std::unordered_map<std::string, Binary> binaries_;  // by build-id
  JitMaps jit_maps_;
  // (pid, address, name): code regenerated at an address gets its new name.
  std::set<std::tuple<uint32_t, uint64_t, std::string>> jit_taken_;
  std::map<uint32_t, std::vector<ElfSymbol>> jit_pending_;
  size_t embedded_ = 0;
};

}  // namespace ebprof::record
