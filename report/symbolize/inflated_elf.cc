#include "report/symbolize/inflated_elf.h"

#include <elf.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zstd.h>

#include "common/unique_fd.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace ebprof::report {
namespace {

// A file mapped read-only.
class Mapped {
 public:
  explicit Mapped(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    struct stat st {};
    if (!fd || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
      return;
    void* p = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p != MAP_FAILED)
      bytes_ = {static_cast<const char*>(p), static_cast<size_t>(st.st_size)};
  }
  ~Mapped() {
    if (!bytes_.empty())
      munmap(const_cast<char*>(bytes_.data()), bytes_.size());
  }
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
  std::span<const char> bytes() const { return bytes_; }

 private:
  std::span<const char> bytes_;
};

struct DecompressorFree {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// DEFLATE expands at most 1032 times; zstd frames bound theirs likewise.
// A section that claims more is damaged or hostile.
constexpr uint64_t kMaxRatio = 1100;
constexpr uint64_t kMaxSection = uint64_t{1} << 30;
// The gABI's value, which glibc 2.36's elf.h lacks.
constexpr uint32_t kCompressZstd = 2;

// A compressed section's header, if it claims a size a compressor can
// produce from its bytes.
std::optional<Elf64_Chdr> header_of(std::span<const char> section) {
  Elf64_Chdr header;
  if (section.size() < sizeof header)
    return std::nullopt;
  std::memcpy(&header, section.data(), sizeof header);
  const uint64_t in = section.size() - sizeof header;
  if ((header.ch_type != ELFCOMPRESS_ZLIB && header.ch_type != kCompressZstd) ||
      header.ch_size > kMaxSection || header.ch_size > kMaxRatio * (in + 1) ||
      header.ch_addralign > 64)
    return std::nullopt;
  return header;
}

// Inflates `section` (its header checked by header_of) into `out`, which
// holds exactly what it claims; false unless it fills `out` exactly.
bool inflate(std::span<const char> section, const Elf64_Chdr& header, char* out,
             libdeflate_decompressor* zlib) {
  const std::span<const char> in = section.subspan(sizeof header);
  if (header.ch_type == ELFCOMPRESS_ZLIB) {
    size_t got = 0;
    return libdeflate_zlib_decompress(zlib, in.data(), in.size(), out, header.ch_size, &got) ==
               LIBDEFLATE_SUCCESS &&
           got == header.ch_size;
  }
  const size_t got = ZSTD_decompress(out, header.ch_size, in.data(), in.size());
  return !ZSTD_isError(got) && got == header.ch_size;
}

// What naming never reads (variables' locations, macros): 15% of libc's
// DWARF, left compressed and out of the image.
bool unread(std::string_view name) {
  return name == ".debug_loc" || name == ".debug_loclists" || name == ".debug_macro" ||
         name == ".debug_macinfo";
}

// The name of section `s`, from the section name table `names`.
std::string_view name_of(std::span<const char> bytes, const Elf64_Shdr& names,
                         const Elf64_Shdr& s) {
  if (names.sh_type != SHT_STRTAB || names.sh_offset > bytes.size() ||
      names.sh_size > bytes.size() - names.sh_offset || s.sh_name >= names.sh_size)
    return {};
  const std::span<const char> table = bytes.subspan(names.sh_offset, names.sh_size);
  const auto end = std::find(table.begin() + s.sh_name, table.end(), '\0');
  return {table.data() + s.sh_name, static_cast<size_t>(end - (table.begin() + s.sh_name))};
}

uint64_t align_up(uint64_t value, uint64_t align) {
  return align > 1 ? (value + align - 1) / align * align : value;
}

}  // namespace

ElfImage::ElfImage(size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return;
  // Megabytes written once, front to back: in 2 MB pages, a handful of
  // page faults instead of thousands.
  madvise(p, size, MADV_HUGEPAGE);
  data_ = static_cast<char*>(p);
  size_ = size;
}

ElfImage::~ElfImage() {
  if (data_)
    munmap(data_, size_);
}

ElfImage inflated_elf(const std::string& path) {
  const Mapped file(path);
  const std::span<const char> bytes = file.bytes();
  Elf64_Ehdr ehdr;
  if (bytes.size() < sizeof ehdr)
    return {};
  std::memcpy(&ehdr, bytes.data(), sizeof ehdr);
  if (std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0 || ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
      ehdr.e_ident[EI_DATA] != ELFDATA2LSB || ehdr.e_shentsize != sizeof(Elf64_Shdr) ||
      ehdr.e_shnum == 0 || ehdr.e_shoff > bytes.size() ||
      (bytes.size() - ehdr.e_shoff) / sizeof(Elf64_Shdr) < ehdr.e_shnum)
    return {};
  std::vector<Elf64_Shdr> sections(ehdr.e_shnum);
  std::memcpy(sections.data(), bytes.data() + ehdr.e_shoff, sections.size() * sizeof(Elf64_Shdr));

  // Where each inflated section goes: after the original bytes, in order.
  struct Inflated {
    Elf64_Shdr* section;
    Elf64_Chdr header;
    uint64_t at;
  };
  std::vector<Inflated> inflated;
  // The compressed bytes, which the image needs no copy of.
  std::vector<std::pair<uint64_t, uint64_t>> compressed;  // [offset, end)
  uint64_t size = bytes.size();
  const Elf64_Shdr* names =
      ehdr.e_shstrndx < sections.size() ? &sections[ehdr.e_shstrndx] : nullptr;
  for (Elf64_Shdr& s : sections) {
    if (!(s.sh_flags & SHF_COMPRESSED) || s.sh_type == SHT_NOBITS)
      continue;
    if (s.sh_offset > bytes.size() || s.sh_size > bytes.size() - s.sh_offset)
      return {};
    compressed.emplace_back(s.sh_offset, s.sh_offset + s.sh_size);
    if (names && unread(name_of(bytes, *names, s))) {
      s.sh_type = SHT_NOBITS;  // libdw passes over it, as over a stripped section
      s.sh_size = 0;
      s.sh_flags &= ~uint64_t{SHF_COMPRESSED};
      continue;
    }
    const std::optional<Elf64_Chdr> header = header_of(bytes.subspan(s.sh_offset, s.sh_size));
    if (!header)
      return {};
    const uint64_t at = align_up(size, header->ch_addralign);
    inflated.push_back({&s, *header, at});
    size = at + header->ch_size;
  }
  if (inflated.empty())
    return {};
  const uint64_t table = align_up(size, 8);
  size = table + sections.size() * sizeof(Elf64_Shdr);

  std::unique_ptr<libdeflate_decompressor, DecompressorFree> zlib(libdeflate_alloc_decompressor());
  ElfImage out(size);
  char* to = out.data();
  if (!zlib || !to)
    return {};
  // Everything else where it was (program headers and notes keep their
  // offsets); pages never written cost neither a fault nor a zeroing.
  std::sort(compressed.begin(), compressed.end());
  uint64_t copied = 0;
  compressed.emplace_back(bytes.size(), bytes.size());
  for (const auto& [from, end] : compressed) {
    if (from > copied)
      std::memcpy(to + copied, bytes.data() + copied, from - copied);
    copied = std::max(copied, end);
  }
  for (auto& [s, header, at] : inflated) {
    if (!inflate(bytes.subspan(s->sh_offset, s->sh_size), header, to + at, zlib.get()))
      return {};
    s->sh_offset = at;
    s->sh_size = header.ch_size;
    s->sh_addralign = header.ch_addralign;
    s->sh_flags &= ~uint64_t{SHF_COMPRESSED};
  }
  std::memcpy(to + table, sections.data(), sections.size() * sizeof(Elf64_Shdr));
  ehdr.e_shoff = table;
  std::memcpy(to, &ehdr, sizeof ehdr);
  return out;
}

}  // namespace ebprof::report
