#pragma once

#include <cstddef>
#include <cstdint>

namespace ebprof::format {

// CRC-32C (Castagnoli), as used by iSCSI, ext4 and SSE4.2's crc32 instruction.
// `crc` continues a previous call; start with 0.
uint32_t crc32c(uint32_t crc, const void* data, size_t size);

}  // namespace ebprof::format
