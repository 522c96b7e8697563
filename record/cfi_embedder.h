#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/eh_frame.h"
#include "common/elf_file.h"
#include "format/contents.h"
#include "record/process_tracker.h"

namespace ebprof::record {

// Picks the call frame information a --call-graph dwarf recording embeds:
// only the FDEs (with their CIEs) that its samples can unwind through, each
// once per file. Which frames a window holds is only known once it is
// unwound, so the pick is conservative: the FDE of each sample's leaf, of
// each frame of its frame-pointer walk, and of every word of its window
// that points into mapped code, return address or not. A binary is read
// from the very file mapped while the process is alive, else from its path
// if the build-id there is the same, and kept open (its tables mapped, not
// read) for the next lookups. A binary whose .eh_frame_hdr is missing or
// unusual goes in whole, as before 1.9.
class CfiEmbedder {
 public:
  CfiEmbedder();
  ~CfiEmbedder();
  CfiEmbedder(CfiEmbedder&&) noexcept;
  CfiEmbedder& operator=(CfiEmbedder&&) noexcept;

  // Opens the binaries `process` maps, once per build-id, while they can be
  // read through it.
  void take(const format::ProcessInfo& process);
  // The CFI a lookup of `pc` in `pid` needs.
  void take_pc(uint32_t pid, uint64_t pc, const ProcessTracker& tracker);
  // The CFI of every word of `bytes` that points into `pid`'s code, looked
  // up as return addresses are (word - 1).
  void take_words(uint32_t pid, std::span<const std::byte> bytes, const ProcessTracker& tracker);
  // The pieces not written yet, a frame per binary.
  std::vector<format::ElfCfi> drain();
  // Binaries with CFI in the file under way.
  size_t binaries() const { return in_file_; }
  // Every entry new again: a new file (--switch-output) holds its own.
  void forget();

 private:
  struct Binary;
  Binary* binary(uint32_t pid, const format::Mapping& m);
  void take_vaddr(Binary& b, uint64_t vaddr);
  void take_entry(Binary& b, uint64_t offset, std::optional<uint64_t> pc);

  // So many binaries stay open at most, then all are let go: a host that
  // deploys new builds for weeks would otherwise run out of descriptors.
  static constexpr size_t kMaxBinaries = 256;
  std::unordered_map<std::string, std::unique_ptr<Binary>> binaries_;  // by build-id; null: none
  size_t in_file_ = 0;
};

}  // namespace ebprof::record
