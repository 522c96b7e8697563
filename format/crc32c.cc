#include "format/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace ebprof::format {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78;  // reversed Castagnoli

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit)
      c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr auto kTable = make_table();

uint32_t crc32c_table(uint32_t crc, const uint8_t* p, size_t size) {
  for (size_t i = 0; i < size; ++i)
    crc = kTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
// SSE 4.2 has CRC-32C in hardware, 8 bytes an instruction: reading a
// recording checks every byte, so this is a measurable part of a report.
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const uint8_t* p,
                                                        size_t size) {
  uint64_t c = crc;
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof word);
    c = _mm_crc32_u64(c, word);
  }
  crc = static_cast<uint32_t>(c);
  for (; size > 0; --size, ++p)
    crc = _mm_crc32_u8(crc, *p);
  return crc;
}

const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

uint32_t crc32c(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
#if defined(__x86_64__)
  if (kHaveSse42)
    return ~crc32c_sse42(~crc, p, size);
#endif
  return ~crc32c_table(~crc, p, size);
}

}  // namespace ebprof::format
