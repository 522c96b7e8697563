#include "common/eh_frame.h"

#include <algorithm>
#include <cstring>

namespace ebprof {
namespace {

// DWARF pointer encodings (DW_EH_PE_*) the index uses.
constexpr uint8_t kUdata4 = 0x03, kSdata4 = 0x0b, kUdata8 = 0x04, kSdata8 = 0x0c;
constexpr uint8_t kPcrel = 0x10, kDatarel = 0x30, kOmit = 0xff;
constexpr size_t kHeaderBytes = 4;

template <typename T>
T read(std::span<const std::byte> bytes, size_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  return value;
}

template <typename T>
void append(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

// Bytes of a value in encoding `encoding`, when it is one of fixed size.
std::optional<size_t> encoded_size(uint8_t encoding) {
  switch (encoding & 0x0f) {
    case kUdata4:
    case kSdata4:
      return 4;
    case kUdata8:
    case kSdata8:
      return 8;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<EhFrameIndex> EhFrameIndex::parse(std::span<const std::byte> hdr,
                                                uint64_t hdr_address) {
  if (hdr.size() < kHeaderBytes || read<uint8_t>(hdr, 0) != 1)
    return std::nullopt;
  const auto pointer_encoding = read<uint8_t>(hdr, 1), count_encoding = read<uint8_t>(hdr, 2),
             table_encoding = read<uint8_t>(hdr, 3);
  const std::optional<size_t> pointer_size = encoded_size(pointer_encoding);
  if (pointer_encoding == kOmit || !pointer_size || count_encoding != kUdata4 ||
      table_encoding != (kDatarel | kSdata4))
    return std::nullopt;
  const size_t count_at = kHeaderBytes + *pointer_size, table_at = count_at + 4;
  if (hdr.size() < table_at)
    return std::nullopt;
  const uint64_t count = read<uint32_t>(hdr, count_at);
  if (count > (hdr.size() - table_at) / kEntryBytes)
    return std::nullopt;
  return EhFrameIndex(hdr.subspan(table_at, count * kEntryBytes), hdr_address);
}

EhFrameIndex::Fde EhFrameIndex::entry(size_t i) const {
  return {hdr_address_ + static_cast<int64_t>(read<int32_t>(table_, i * kEntryBytes)),
          hdr_address_ + static_cast<int64_t>(read<int32_t>(table_, i * kEntryBytes + 4))};
}

std::optional<EhFrameIndex::Fde> EhFrameIndex::find(uint64_t pc) const {
  // The last entry at or below pc: the table is sorted by first address.
  size_t lo = 0, hi = size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (entry(mid).pc <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return std::nullopt;
  return entry(lo - 1);
}

std::optional<EhFrameEntry> eh_frame_entry(std::span<const std::byte> eh_frame, uint64_t offset) {
  if (offset > eh_frame.size() || eh_frame.size() - offset < 8)
    return std::nullopt;
  const uint32_t length = read<uint32_t>(eh_frame, offset);
  if (length < 4 || length == 0xffffffff || length > eh_frame.size() - offset - 4)
    return std::nullopt;
  EhFrameEntry e{eh_frame.subspan(offset, 4 + uint64_t{length}), std::nullopt};
  // After the length: 0 for a CIE, else the distance back to the FDE's CIE.
  if (const uint32_t back = read<uint32_t>(eh_frame, offset + 4); back != 0) {
    if (back > offset + 4)
      return std::nullopt;
    e.cie_offset = offset + 4 - back;
  }
  return e;
}

std::string build_eh_frame_hdr(uint64_t hdr_address, uint64_t eh_frame_address,
                               std::vector<std::pair<uint64_t, uint64_t>> fdes) {
  std::sort(fdes.begin(), fdes.end());
  fdes.erase(std::unique(fdes.begin(), fdes.end(),
                         [](const auto& a, const auto& b) { return a.first == b.first; }),
             fdes.end());
  auto relative = [&](uint64_t address) { return static_cast<int64_t>(address - hdr_address); };
  auto fits = [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
  std::erase_if(
      fdes, [&](const auto& f) { return !fits(relative(f.first)) || !fits(relative(f.second)); });
  std::string out;
  append<uint8_t>(out, 1);
  append<uint8_t>(out, kPcrel | kSdata4);
  append<uint8_t>(out, kUdata4);
  append<uint8_t>(out, kDatarel | kSdata4);
  // pc-relative: from the field itself, just after the 4-byte header.
  append<int32_t>(out, static_cast<int32_t>(eh_frame_address - (hdr_address + kHeaderBytes)));
  append<uint32_t>(out, static_cast<uint32_t>(fdes.size()));
  for (const auto& [pc, fde] : fdes) {
    append<int32_t>(out, static_cast<int32_t>(relative(pc)));
    append<int32_t>(out, static_cast<int32_t>(relative(fde)));
  }
  return out;
}

}  // namespace ebprof
