#pragma once

// The byte layout around the Cap'n Proto messages: file header and frame
// headers. Private to format/ (writer.cc and reader.cc); docs/format.md is
// the reference.

#include <array>
#include <cstdint>
#include <cstring>

namespace ebprof::format {

// PNG-style: the high byte catches 7-bit transfers, the newline catches
// text-mode line-ending conversion.
inline constexpr std::array<uint8_t, 8> kMagic = {0x89, 'E', 'B', 'P', 'R', 'O', 'F', '\n'};
inline constexpr uint16_t kVersionMajor = 1;   // a recording
inline constexpr uint16_t kVersionMinor = 10;  // newer minors only append kinds/fields
// A merged file (several sources, each starting at a Source frame): a 1.x
// reader would run their id spaces together, so it must refuse the file.
inline constexpr uint16_t kMergedVersionMajor = 2;
// 1: may hold 1.3 frames; 2: MergeEnd; 3: may hold 1.6 frames (copies);
// 4: may hold 1.8 frames (Python code objects); 5: 1.9 frames (CFI pieces);
// 6: 1.10 frames (mapped files named by id)
inline constexpr uint16_t kMergedVersionMinor = 6;
// Readers take every major up to this one.
inline constexpr uint16_t kNewestMajor = kMergedVersionMajor;
inline constexpr size_t kFileHeaderSize = 16;
inline constexpr size_t kFrameHeaderSize = 16;
// No frame is ever this large; a bigger length is corruption, not data.
inline constexpr uint32_t kMaxFrameBytes = 256u << 20;

// What a frame of the file holds (a frame of a stack is a FrameKind).
enum class FrameType : uint16_t {
  kRecordingInfo = 1,
  kKernelSymbols = 2,
  kProcess = 3,
  kSampleBatch = 4,
  kRecordingEnd = 5,
  kElfSymbols = 6,
  kLosses = 7,       // since 1.1
  kJitSymbols = 8,   // since 1.1
  kSource = 9,       // since 2.0, merged files only
  kElfCfi = 10,      // since 1.3
  kMergeEnd = 11,    // since 2.2, merged files only
  kCopy = 12,        // since 1.6: another frame again, header and payload
  kPythonCode = 13,  // since 1.8
};

// The types a kCopy frame may hold, whose loss costs more than their own
// frame (a process's maps, a binary's symbols or CFI name and unwind every
// sample in them): writers from 1.6 to 1.8 wrote each again, after the
// next sample batch.
inline constexpr bool copied_type(FrameType type) {
  return type == FrameType::kKernelSymbols || type == FrameType::kProcess ||
         type == FrameType::kElfSymbols || type == FrameType::kJitSymbols ||
         type == FrameType::kElfCfi || type == FrameType::kPythonCode;
}

// What the writer copies since 1.9: the maps alone, small and naming every
// sample of their process. Tables (symbols, CFI, code objects) now come in
// pieces as samples reach them, so a damaged one costs some names or some
// unwinding, while their copies were a fifth to a half of a 10 s file.
inline constexpr bool written_twice(FrameType type) {
  return type == FrameType::kProcess;
}

inline constexpr uint16_t kFrameZstd = 1;  // payload is one zstd frame

// The most a frame of `kind` stored compressed in `stored` bytes can hold
// as the writer makes it: what each kind can carry (a header or a loss
// report is small, a sample batch or a binary's tables can be large), and
// never more than 1024 times its compressed size (the writer's messages
// compress 3-30 times). A frame claiming more is damage: inflating a
// crafted 8 KB frame to 256 MiB took seconds of CPU.
inline constexpr uint64_t max_inflated_bytes(uint16_t kind, uint64_t stored) {
  constexpr uint64_t kMiB = 1 << 20;
  uint64_t cap = kMaxFrameBytes;
  switch (static_cast<FrameType>(kind)) {
    case FrameType::kRecordingInfo:
      cap = 16 * kMiB;  // the command line, modules, host facts
      break;
    case FrameType::kRecordingEnd:
    case FrameType::kLosses:
    case FrameType::kSource:
    case FrameType::kMergeEnd:
      cap = kMiB;
      break;
    case FrameType::kKernelSymbols:
    case FrameType::kProcess:
      cap = 64 * kMiB;  // kallsyms; the most mappings a process can have
      break;
    case FrameType::kJitSymbols:
    case FrameType::kPythonCode:
      cap = 128 * kMiB;  // perf maps are read up to 64 MiB; code objects are small
      break;
    default:
      break;  // sample batches, binaries' symbols and CFI: up to the frame limit
  }
  return stored * 1024 + 64 * 1024 < cap ? stored * 1024 + 64 * 1024 : cap;
}

struct FrameHeader {
  uint32_t stored_size = 0;  // payload bytes in the file
  uint32_t raw_size = 0;     // payload bytes after decompression
  uint16_t kind = 0;
  uint16_t flags = 0;
  uint32_t crc = 0;  // CRC-32C of the first 12 header bytes, then the stored payload
};

inline void put_le16(uint8_t* p, uint16_t v) {
  p[0] = v & 0xff;
  p[1] = v >> 8;
}
inline void put_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = (v >> (8 * i)) & 0xff;
}
inline uint16_t get_le16(const uint8_t* p) {
  return p[0] | (p[1] << 8);
}
inline uint32_t get_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

inline std::array<uint8_t, kFrameHeaderSize> encode_frame_header(const FrameHeader& h) {
  std::array<uint8_t, kFrameHeaderSize> out{};
  put_le32(&out[0], h.stored_size);
  put_le32(&out[4], h.raw_size);
  put_le16(&out[8], h.kind);
  put_le16(&out[10], h.flags);
  put_le32(&out[12], h.crc);
  return out;
}

inline FrameHeader decode_frame_header(const uint8_t* p) {
  return FrameHeader{get_le32(p), get_le32(p + 4), get_le16(p + 8), get_le16(p + 10),
                     get_le32(p + 12)};
}

}  // namespace ebprof::format
