#pragma once

// What the fuzz targets share: an input as a file the reader can open, and
// a copy with every frame's checksum made right.

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "format/crc32c.h"
#include "format/framing.h"

namespace ebprof::fuzz {

// The reader takes a path: an in-memory file holding `data`, reused by
// each input; "" when it cannot be written.
inline const std::string& as_file(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("ebprof-fuzz", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  static const std::string none;
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
    return none;
  return path;
}

// A mutated payload almost never keeps its CRC, so on its own the fuzzer
// would test little beyond the checksum. This copy has every frame's CRC
// recomputed, so mutations reach decompression and Cap'n Proto decoding.
inline std::vector<uint8_t> with_valid_checksums(const uint8_t* data, size_t size) {
  std::vector<uint8_t> out(data, data + size);
  size_t at = format::kFileHeaderSize;
  while (at + format::kFrameHeaderSize <= out.size()) {
    format::FrameHeader h = format::decode_frame_header(&out[at]);
    size_t end = at + format::kFrameHeaderSize + h.stored_size;
    if (end > out.size())
      break;
    uint32_t crc = format::crc32c(0, &out[at], 12);
    crc = format::crc32c(crc, &out[at + format::kFrameHeaderSize], h.stored_size);
    format::put_le32(&out[at + 12], crc);
    at = end;
  }
  return out;
}

}  // namespace ebprof::fuzz
