#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ebprof {

struct ElfSymbol {
  uint64_t address = 0;  // ELF virtual address
  uint64_t size = 0;
  std::string name;  // as in the file (mangled), without a symbol version (@GLIBC_2.2.5)
  // Of the names one address has, the one people know is the global one,
  // in its current version (glibc's cfree@GLIBC_2.2.5 is an old alias of free).
  enum class Binding : uint8_t { kGlobal, kWeak, kLocal } binding = Binding::kGlobal;
  bool old_version = false;
  bool operator==(const ElfSymbol&) const = default;
};

// The symbol of `symbols` (sorted by address) whose [address, address +
// size) holds `address`, or null: a gap or a symbol's end is never named.
// When several start at the same address, the last of them.
const ElfSymbol* find_symbol(std::span<const ElfSymbol> symbols, uint64_t address);

// A PT_LOAD segment: file bytes [offset, offset + file_size) at vaddr.
struct LoadSegment {
  uint64_t offset = 0;
  uint64_t vaddr = 0;
  uint64_t file_size = 0;
  bool operator==(const LoadSegment&) const = default;
};

// The ELF virtual address at file offset `offset` of a file with these
// loadable segments, if one of them holds it.
std::optional<uint64_t> offset_to_vaddr(std::span<const LoadSegment> segments, uint64_t offset);

// What identifies an ELF file's contents, so that a reader on another machine
// or years later can tell whether the file it has is the one that ran.
struct ElfIdentity {
  std::string build_id;   // raw bytes of the GNU build-id note; empty when there is none
  std::string debuglink;  // file name in .gnu_debuglink; empty when there is none
  bool operator==(const ElfIdentity&) const = default;
};

// Reads only the identity (program headers and notes, not symbols): cheap
// enough for every mapping of every sampled process. Throws Error when
// `path` is not a readable regular ELF file.
ElfIdentity read_elf_identity(const std::string& path);

// An ELF file's identity and where its loadable segments go: what places
// an address in it, without reading its symbols. Throws Error when `path`
// is not a readable regular ELF file.
struct ElfLayout {
  ElfIdentity identity;
  std::vector<LoadSegment> segments;
};
ElfLayout read_elf_layout(const std::string& path);

// The exported (.dynsym) symbols of `path` named in `names`, of any type
// (data as well as functions), with their loadable segments: what finds a
// runtime's own structures in a process. Throws Error when `path` is not
// a readable regular ELF file.
struct ElfExports {
  ElfIdentity identity;
  std::vector<LoadSegment> segments;
  std::vector<ElfSymbol> symbols;  // those of `names` it exports, in no order
};
ElfExports read_exports(const std::string& path, std::span<const std::string_view> names);

// An ELF file's call frame information: .eh_frame and its index
// .eh_frame_hdr, at their virtual addresses (pc-relative encodings in them
// are relative to those), with the loadable segments that place them. The
// sections are viewed in the file's mapping, which the tables keep open:
// only the pages looked at are read.
struct ElfUnwindTables {
  ElfIdentity identity;
  std::vector<LoadSegment> segments;
  uint64_t eh_frame_hdr_address = 0;
  std::span<const std::byte> eh_frame_hdr;
  uint64_t eh_frame_address = 0;
  std::span<const std::byte> eh_frame;  // empty when the file has none
  std::shared_ptr<const void> file;     // the open file and its mapping
};

// Throws Error when `path` is not a readable regular ELF file. A file whose
// .eh_frame is too large to be a real one is refused too.
ElfUnwindTables read_unwind_tables(const std::string& path);

// The function symbols and loadable segments of one ELF file: what is needed
// to turn a sampled address into a name. The file is closed after loading.
class ElfSymbolTable {
 public:
  // Throws Error when `path` is not a readable regular ELF file.
  static ElfSymbolTable load(const std::string& path);
  // A table from its parts, e.g. a copy embedded in a recording. Symbols are
  // sorted and deduplicated here.
  ElfSymbolTable(ElfIdentity identity, std::vector<LoadSegment> segments,
                 std::vector<ElfSymbol> symbols, bool complete = false);

  const ElfIdentity& identity() const { return identity_; }
  const std::vector<LoadSegment>& segments() const { return segments_; }
  const std::vector<ElfSymbol>& symbols() const { return symbols_; }

  // The ELF virtual address at file offset `offset`, if a PT_LOAD segment
  // maps it. Mapping offsets come from /proc/PID/maps, so this is where PIE
  // and shared-library load bias cancels out.
  std::optional<uint64_t> offset_to_vaddr(uint64_t offset) const;

  // The function whose [address, address + size) holds `vaddr`. Symbols
  // without a size never match: a guess could name the wrong function.
  const ElfSymbol* find(uint64_t vaddr) const;

  size_t size() const { return symbols_.size(); }
  // Whether the file had a .symtab: without one (a stripped binary, only
  // .dynsym) an address in no symbol is most likely in a local function.
  bool complete() const { return complete_; }

 private:
  ElfIdentity identity_;
  std::vector<LoadSegment> segments_;
  std::vector<ElfSymbol> symbols_;  // ascending address, one per address
  bool complete_ = false;
};

}  // namespace ebprof
