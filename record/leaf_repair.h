#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/elf_file.h"
#include "record/process_tracker.h"

struct Dwarf_CFI_s;

namespace ebprof::record {

// How much stack records carry in frame-pointer mode, for the repair: a
// leaf's return address is rarely further up than this.
inline constexpr uint32_t kLeafWindowBytes = 512;

// Names the callers of a leaf that has no frame pointer (libc's memcpy, its
// system-call wrappers: Debian builds libc without them), which a
// frame-pointer walk skips: rbp still holds the caller's frame, so the walk
// goes from the leaf straight to the caller's caller. Per distinct address,
// the binary's call frame information says whether the function has set up
// its frame pointer there; where it has not, its return address is just
// below its CFA, in the few hundred bytes of stack each record carries, and
// the same question goes to its caller, until one has a frame pointer. The
// file keeps frame-pointer stacks: nothing is stored per sample, and
// distinct addresses are looked up once.
class LeafRepair {
 public:
  LeafRepair();
  ~LeafRepair();
  LeafRepair(const LeafRepair&) = delete;
  LeafRepair& operator=(const LeafRepair&) = delete;

  // `user`, the frame-pointer walk of a sample of `pid` (leaf first), with
  // the leaf's frameless callers put in where they are missing; `regs` (rip, rsp, ...)
  // and `stack` (from rsp up) as the record carries them. The span lives
  // until the next call.
  std::span<const uint64_t> repair(uint32_t pid, std::span<const uint64_t> user,
                                   std::span<const uint64_t> regs, std::span<const std::byte> stack,
                                   const ProcessTracker& tracker);

  // Where a sample in the code region of `pid` around `pc` (1 <<
  // EBPROF_CODE_REGION_SHIFT bytes, aligned) needs the stack for a repair:
  // bit i set when some address of its i-th granule has no frame pointer
  // set up (bpf/profile.h). Nullopt while the mapping there is unknown.
  std::optional<uint64_t> frameless_granules(uint32_t pid, uint64_t pc,
                                             const ProcessTracker& tracker);

 private:
  struct Binary;
  Binary* binary(uint32_t pid, const format::Mapping& m);
  // `pc`'s binary, open with its CFI, and its address there; nullopt when
  // there is no such binary.
  struct Located {
    Binary* binary;
    uint64_t vaddr;
  };
  std::optional<Located> locate(uint32_t pid, const format::Mapping& m, uint64_t pc);
  // N where the CFA is rsp + N at `pc` of `pid`, when the function has no
  // frame pointer set up there; nullopt when it has, or nothing says.
  std::optional<uint64_t> frameless_cfa(uint32_t pid, uint64_t pc, const ProcessTracker& tracker);

  // Each binary keeps its file open: so many at most, then all let go (a
  // host that deploys new builds for weeks would otherwise run out of
  // descriptors).
  static constexpr size_t kMaxBinaries = 256;
  std::unordered_map<std::string, std::unique_ptr<Binary>> binaries_;  // by build-id
  struct Key {
    const Binary* binary;
    uint64_t vaddr;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>{}(k.binary) ^ (k.vaddr * 0x9e3779b97f4a7c15ull);
    }
  };
  std::unordered_map<Key, std::optional<uint64_t>, KeyHash> cfas_;
  std::unordered_map<Key, uint64_t, KeyHash> granules_;  // by region start
  std::vector<uint64_t> repaired_;
};

}  // namespace ebprof::record
