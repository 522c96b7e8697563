#include "common/elf_file.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <tuple>

#include "common/eh_frame.h"
#include "common/error.h"
#include "common/unique_fd.h"

namespace ebprof {
namespace {

struct ElfEnd {
  void operator()(Elf* elf) const { elf_end(elf); }
};
using ElfHandle = std::unique_ptr<Elf, ElfEnd>;

// An ELF handle with the descriptor it reads from (libelf does not own it).
struct OpenElf {
  UniqueFd fd;
  ElfHandle elf;
};

OpenElf open_elf(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE)
    throw Error("libelf is unusable");
  // Paths come from recordings and /proc: a device or FIFO must not even be
  // opened (opening /dev/watchdog arms it, a serial port resets a board).
  // O_PATH resolves the name without opening the file; only a regular
  // file is then opened for reading, through that very inode.
  UniqueFd where(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (!where)
    throw_errno("cannot open " + path, errno);
  struct stat st {};
  if (fstat(where.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(path + " is not a regular file");
  UniqueFd fd(::open(("/proc/self/fd/" + std::to_string(where.get())).c_str(),
                     O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd)
    throw_errno("cannot open " + path, errno);
  ElfHandle elf(elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
    throw Error(path + " is not an ELF file");
  return OpenElf{std::move(fd), std::move(elf)};
}

std::vector<GElf_Phdr> program_headers(Elf* elf, const std::string& path) {
  size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0)
    throw Error(path + ": unreadable program headers");
  std::vector<GElf_Phdr> out;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph))
      out.push_back(ph);
  }
  return out;
}

std::string build_id_of(Elf* elf, const std::string& path) {
  for (const GElf_Phdr& ph : program_headers(elf, path)) {
    if (ph.p_type != PT_NOTE)
      continue;
    Elf_Data* data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
    if (!data)
      continue;
    GElf_Nhdr note;
    size_t offset = 0, name_at = 0, desc_at = 0;
    while ((offset = gelf_getnote(data, offset, &note, &name_at, &desc_at)) > 0) {
      const char* base = static_cast<const char*>(data->d_buf);
      // Build-ids are 8-20 bytes in practice; a longer note is not one we
      // can key by (recordings cap them at 64 bytes).
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(base + name_at, "GNU", 4) == 0 && note.n_descsz <= 64)
        return std::string(base + desc_at, note.n_descsz);
    }
  }
  return "";
}

std::string debuglink_of(Elf* elf) {
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0)
    return "";
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr shdr;
    const char* name = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, names, shdr.sh_name) : nullptr;
    if (!name || std::strcmp(name, ".gnu_debuglink") != 0)
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || !data->d_buf || data->d_size == 0)
      return "";
    const char* file = static_cast<const char*>(data->d_buf);
    return std::string(file, strnlen(file, data->d_size));
  }
  return "";
}

ElfIdentity identity_of(Elf* elf, const std::string& path) {
  return ElfIdentity{build_id_of(elf, path), debuglink_of(elf)};
}

// `versions`: the section's GNU version table, if any (.dynsym's names
// carry their versions there, .symtab's in the name).
void read_functions(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, Elf_Data* versions,
                    std::vector<ElfSymbol>& out) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (!data || shdr.sh_entsize == 0)
    return;
  size_t count = shdr.sh_size / shdr.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(data, static_cast<int>(i), &sym))
      break;
    int type = GELF_ST_TYPE(sym.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
        sym.st_value == 0)
      continue;
    const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
    if (!name || !*name || *name == '@')
      continue;
    const int bind = GELF_ST_BIND(sym.st_info);
    // .symtab spells versions out: clock_nanosleep@@GLIBC_2.17 is the
    // current one, clock_nanosleep@GLIBC_2.2.5 an old one; .dynsym marks
    // old ones hidden in its version table.
    const size_t at = std::strcspn(name, "@");
    GElf_Versym version = 0;
    const bool old = name[at] == '@'
                         ? name[at + 1] != '@'
                         : versions && gelf_getversym(versions, static_cast<int>(i), &version) &&
                               (version & 0x8000);
    out.push_back({sym.st_value, sym.st_size, std::string(name, at),
                   bind == STB_GLOBAL ? ElfSymbol::Binding::kGlobal
                   : bind == STB_WEAK ? ElfSymbol::Binding::kWeak
                                      : ElfSymbol::Binding::kLocal,
                   old});
  }
}

}  // namespace

namespace {

std::vector<LoadSegment> load_segments(Elf* elf, const std::string& path) {
  std::vector<LoadSegment> segments;
  for (const GElf_Phdr& ph : program_headers(elf, path))
    if (ph.p_type == PT_LOAD)
      segments.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
  return segments;
}

// The section `name`'s address and bytes, if the file has it with bytes.
// The section `wanted`, viewed in place (a mapped file's raw data is its
// mapping), and its address; false when there is none.
bool section_view(Elf* elf, const char* wanted, uint64_t& address,
                  std::span<const std::byte>& bytes) {
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0)
    return false;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr shdr;
    const char* name = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, names, shdr.sh_name) : nullptr;
    if (!name || std::strcmp(name, wanted) != 0 || shdr.sh_type == SHT_NOBITS)
      continue;
    Elf_Data* data = elf_rawdata(scn, nullptr);
    if (!data || !data->d_buf)
      return false;
    address = shdr.sh_addr;
    bytes = {static_cast<const std::byte*>(data->d_buf), data->d_size};
    return true;
  }
  return false;
}

}  // namespace

ElfUnwindTables read_unwind_tables(const std::string& path) {
  auto elf = std::make_shared<OpenElf>(open_elf(path));
  ElfUnwindTables t{identity_of(elf->elf.get(), path), load_segments(elf->elf.get(), path)};
  section_view(elf->elf.get(), ".eh_frame_hdr", t.eh_frame_hdr_address, t.eh_frame_hdr);
  section_view(elf->elf.get(), ".eh_frame", t.eh_frame_address, t.eh_frame);
  if (t.eh_frame.size() > kMaxEhFrame || t.eh_frame_hdr.size() > kMaxEhFrame)
    throw Error(path + ": an .eh_frame of " + std::to_string(t.eh_frame.size()) + " bytes");
  t.file = std::move(elf);
  return t;
}

ElfLayout read_elf_layout(const std::string& path) {
  OpenElf elf = open_elf(path);
  return {identity_of(elf.elf.get(), path), load_segments(elf.elf.get(), path)};
}

ElfIdentity read_elf_identity(const std::string& path) {
  OpenElf elf = open_elf(path);
  return identity_of(elf.elf.get(), path);
}

ElfSymbolTable::ElfSymbolTable(ElfIdentity identity, std::vector<LoadSegment> segments,
                               std::vector<ElfSymbol> symbols, bool complete)
    : identity_(std::move(identity)),
      segments_(std::move(segments)),
      symbols_(std::move(symbols)),
      complete_(complete) {
  // At one address keep one symbol: the largest (a size of 0 says
  // nothing), then the name people know and grep for, as perf chooses it.
  // glibc's malloc is also __libc_malloc, __malloc and __GI___libc_malloc:
  // global over weak over local, a current version over an old one, then
  // the fewest leading underscores.
  // Sorted by address alone, a cheap comparison, then ranked only where
  // names share an address: a debuginfo .symtab has tens of thousands.
  auto underscores = [](const std::string& name) { return name.find_first_not_of('_'); };
  auto better = [&](const ElfSymbol& a, const ElfSymbol& b) {
    return std::forward_as_tuple(b.size, a.binding, a.old_version, underscores(a.name), a.name) <
           std::forward_as_tuple(a.size, b.binding, b.old_version, underscores(b.name), b.name);
  };
  std::sort(symbols_.begin(), symbols_.end(),
            [](const ElfSymbol& a, const ElfSymbol& b) { return a.address < b.address; });
  auto kept = symbols_.begin();
  for (auto run = symbols_.begin(); run != symbols_.end();) {
    auto end = std::find_if(run, symbols_.end(),
                            [&](const ElfSymbol& s) { return s.address != run->address; });
    if (auto best = std::min_element(run, end, better); best != kept)
      *kept = std::move(*best);
    ++kept;
    run = end;
  }
  symbols_.erase(kept, symbols_.end());
}

ElfExports read_exports(const std::string& path, std::span<const std::string_view> names) {
  OpenElf elf = open_elf(path);
  ElfExports out{identity_of(elf.elf.get(), path), load_segments(elf.elf.get(), path), {}};
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.elf.get(), scn));) {
    GElf_Shdr shdr;
    Elf_Data* data = nullptr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM || shdr.sh_entsize == 0 ||
        !(data = elf_getdata(scn, nullptr)))
      continue;
    for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym))
        break;
      const char* name = elf_strptr(elf.elf.get(), shdr.sh_link, sym.st_name);
      if (sym.st_shndx == SHN_UNDEF || !name ||
          std::find(names.begin(), names.end(), std::string_view(name)) == names.end())
        continue;
      out.symbols.push_back({sym.st_value, sym.st_size, name});
    }
  }
  return out;
}

ElfSymbolTable ElfSymbolTable::load(const std::string& path) {
  OpenElf elf = open_elf(path);
  std::vector<LoadSegment> segments = load_segments(elf.elf.get(), path);
  // .symtab is complete; .dynsym is what a stripped binary still has. Read
  // both: the constructor removes duplicates.
  std::vector<ElfSymbol> symbols;
  bool symtab = false;
  Elf_Data* versions = nullptr;  // .gnu.version, which only .dynsym has
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.elf.get(), scn));) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_GNU_versym)
      versions = elf_getdata(scn, nullptr);
  }
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.elf.get(), scn));) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) && (shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM)) {
      symtab |= shdr.sh_type == SHT_SYMTAB;
      read_functions(elf.elf.get(), scn, shdr, shdr.sh_type == SHT_DYNSYM ? versions : nullptr,
                     symbols);
    }
  }
  return ElfSymbolTable(identity_of(elf.elf.get(), path), std::move(segments), std::move(symbols),
                        symtab);
}

std::optional<uint64_t> offset_to_vaddr(std::span<const LoadSegment> segments, uint64_t offset) {
  for (const LoadSegment& s : segments)
    if (offset >= s.offset && offset < s.offset + s.file_size)
      return s.vaddr + (offset - s.offset);
  return std::nullopt;
}

std::optional<uint64_t> ElfSymbolTable::offset_to_vaddr(uint64_t offset) const {
  return ebprof::offset_to_vaddr(segments_, offset);
}

const ElfSymbol* find_symbol(std::span<const ElfSymbol> symbols, uint64_t address) {
  auto it = std::upper_bound(symbols.begin(), symbols.end(), address,
                             [](uint64_t a, const ElfSymbol& s) { return a < s.address; });
  if (it == symbols.begin())
    return nullptr;
  --it;
  return address - it->address < it->size ? &*it : nullptr;
}

const ElfSymbol* ElfSymbolTable::find(uint64_t vaddr) const {
  return find_symbol(symbols_, vaddr);
}

}  // namespace ebprof
