#pragma once

// The bytes of .eh_frame and its index .eh_frame_hdr, as far as picking
// out and putting back single entries needs: the recorder embeds only the
// FDEs (and their CIEs) its samples can unwind through, the report builds
// the two sections again from them. Pure functions over byte buffers.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ebprof {

// The largest .eh_frame a binary may have and a recording may hold or
// describe (libpython's, among the largest real ones, is 342 KB).
inline constexpr uint64_t kMaxEhFrame = 64 << 20;

// .eh_frame_hdr's binary search table, viewed in place: version 1 with
// entries of two 4-byte datarel values, what GNU ld and lld write. Nullopt
// for any other encoding, or bytes that do not hold the table they say.
class EhFrameIndex {
 public:
  static std::optional<EhFrameIndex> parse(std::span<const std::byte> hdr, uint64_t hdr_address);

  // The FDE a lookup of `pc` finds, as libdw's would: the last one whose
  // first address is at or below `pc`. Its first address and where it is.
  struct Fde {
    uint64_t pc = 0;
    uint64_t address = 0;
  };
  std::optional<Fde> find(uint64_t pc) const;
  size_t size() const { return table_.size() / kEntryBytes; }

 private:
  static constexpr size_t kEntryBytes = 8;
  EhFrameIndex(std::span<const std::byte> table, uint64_t hdr_address)
      : table_(table), hdr_address_(hdr_address) {}
  Fde entry(size_t i) const;

  std::span<const std::byte> table_;
  uint64_t hdr_address_;
};

// The CIE or FDE at `offset` of `eh_frame`, its length field included, and
// for an FDE the offset of its CIE: nullopt when it does not fit, is the
// terminator, or uses the 64-bit format (which no x86-64 toolchain emits
// in .eh_frame).
struct EhFrameEntry {
  std::span<const std::byte> bytes;
  std::optional<uint64_t> cie_offset;  // set for an FDE
};
std::optional<EhFrameEntry> eh_frame_entry(std::span<const std::byte> eh_frame, uint64_t offset);

// An .eh_frame_hdr at `hdr_address` indexing the FDEs `fdes` (first
// address, address of the FDE) of an .eh_frame at `eh_frame_address`, in
// the encoding EhFrameIndex reads. Sorts and deduplicates `fdes`.
std::string build_eh_frame_hdr(uint64_t hdr_address, uint64_t eh_frame_address,
                               std::vector<std::pair<uint64_t, uint64_t>> fdes);

}  // namespace ebprof
