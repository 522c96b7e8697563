#include "report/symbolize/python_lines.h"

namespace ebprof::report {
namespace {

// Reads CPython's variable-length integers: six bits a byte, low bits
// first, bit 6 set on every byte but the last.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return at_ >= bytes_.size(); }
  uint8_t byte() { return done() ? 0 : static_cast<uint8_t>(bytes_[at_++]); }
  uint32_t varint() {
    uint32_t value = 0;
    for (unsigned shift = 0; !done() && shift < 32; shift += 6) {
      const uint8_t b = byte();
      value |= static_cast<uint32_t>(b & 63) << shift;
      if (!(b & 64))
        break;
    }
    return value;
  }
  int32_t svarint() {
    const uint32_t u = varint();
    return (u & 1) ? -static_cast<int32_t>(u >> 1) : static_cast<int32_t>(u >> 1);
  }
  // Past the rest of an entry: up to the next byte with its top bit set.
  void skip_entry() {
    while (!done() && !(static_cast<uint8_t>(bytes_[at_]) & 0x80))
      ++at_;
  }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace

int python_line(std::string_view table, uint32_t first_line, int32_t lasti) {
  if (lasti < 0)
    return static_cast<int>(first_line);
  // Each entry: a byte 1CCCCLLL (code C, L+1 code units), then what its
  // code says (Objects/locations.md in CPython 3.11).
  Cursor c(table);
  int64_t line = first_line, address = 0;
  while (!c.done()) {
    const uint8_t head = c.byte();
    if (!(head & 0x80))
      return 0;  // not an entry's first byte: a damaged table
    const int code = (head >> 3) & 15;
    const int64_t length = (head & 7) + 1;
    bool has_line = true;
    if (code == 15) {
      has_line = false;  // no location
    } else if (code == 14) {
      line += c.svarint();  // then end line, start and end columns
    } else if (code == 13) {
      line += c.svarint();  // no columns
    } else if (code >= 10) {
      line += code - 10;  // then two column bytes
    }
    c.skip_entry();
    if (lasti < address + length)
      return has_line && line > 0 ? static_cast<int>(line) : 0;
    address += length;
  }
  return 0;
}

}  // namespace ebprof::report
