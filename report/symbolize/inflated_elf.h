#pragma once

// Debuginfo is usually shipped with its DWARF sections compressed
// (SHF_COMPRESSED), which libdw inflates whole, with zlib, when it opens
// the file: 10 MB for Debian's libc6-dbg, the longest step of a report
// on a small recording. libdeflate inflates the same bytes 2.7 times
// faster, and libdw 0.188 cannot read zstd-compressed sections at all.

#include <cstddef>
#include <string>
#include <utility>

namespace ebprof::report {

// An ELF file's bytes in memory, writable (libelf takes them so).
class ElfImage {
 public:
  ElfImage() = default;
  explicit ElfImage(size_t size);  // zeroed; empty when out of memory
  ~ElfImage();
  ElfImage(ElfImage&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  ElfImage& operator=(ElfImage&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  explicit operator bool() const { return data_ != nullptr; }
  char* data() { return data_; }
  size_t size() const { return size_; }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
};

// A copy of the ELF file at `path` whose compressed sections are inflated:
// the original bytes, the inflated sections after them, and a section
// header table pointing there. Empty when there is nothing to inflate or
// anything looks wrong (not a 64-bit little-endian ELF file, a section
// that does not inflate to the size it claims, or claims more than a
// compressor can produce): libdw then reads the file itself, as before.
ElfImage inflated_elf(const std::string& path);

}  // namespace ebprof::report
