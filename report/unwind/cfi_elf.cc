#include "report/unwind/cfi_elf.h"

#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "common/eh_frame.h"
#include "common/error.h"

namespace ebprof::report {
namespace {

struct ElfEnd {
  void operator()(Elf* elf) const { elf_end(elf); }
};

void add_section(Elf* elf, unsigned name, uint64_t address, const std::string& bytes) {
  Elf_Scn* scn = elf_newscn(elf);
  Elf_Data* data = scn ? elf_newdata(scn) : nullptr;
  if (!data)
    throw Error(std::string("libelf: ") + elf_errmsg(-1));
  data->d_buf = const_cast<char*>(bytes.data());
  data->d_size = bytes.size();
  data->d_type = ELF_T_BYTE;
  data->d_align = 8;
  GElf_Shdr shdr{};
  shdr.sh_name = name;
  shdr.sh_type = SHT_PROGBITS;
  shdr.sh_flags = SHF_ALLOC;
  // Pointers in the tables are relative to where they are loaded.
  shdr.sh_addr = address;
  shdr.sh_addralign = 8;
  gelf_update_shdr(scn, &shdr);
}

// The two sections as a 1.9 recording's pieces make them: each piece at its
// offset, zeros between (where no sample can reach: libdw finds every FDE
// through the index, and stops at a zero length if it ever scans), and an
// index of the FDEs there are.
void assemble(const format::ElfCfi& cfi, std::string& eh_frame_hdr, std::string& eh_frame) {
  // Up to the last piece's end: nothing after it is read, and a hostile
  // recording's claim of a 64 MiB section costs no more than its pieces.
  uint64_t end = 0;
  for (const format::CfiPiece& p : cfi.pieces)
    if (p.offset <= cfi.eh_frame_size && p.bytes.size() <= cfi.eh_frame_size - p.offset)
      end = std::max(end, p.offset + p.bytes.size());
  eh_frame.assign(end, '\0');
  std::vector<std::pair<uint64_t, uint64_t>> fdes;
  for (const format::CfiPiece& p : cfi.pieces) {
    if (p.offset > eh_frame.size() || p.bytes.size() > eh_frame.size() - p.offset)
      continue;  // another frame said another size: not this binary's
    eh_frame.replace(p.offset, p.bytes.size(), p.bytes);
    if (p.fde)
      fdes.emplace_back(p.pc, cfi.eh_frame_address + p.offset);
  }
  eh_frame_hdr =
      build_eh_frame_hdr(cfi.eh_frame_hdr_address, cfi.eh_frame_address, std::move(fdes));
}

}  // namespace

size_t cfi_pieces(const std::unordered_map<std::string, format::ElfCfi>& cfi) {
  size_t n = 0;
  for (const auto& [build_id, c] : cfi)
    n += c.pieces.size();
  return n;
}

UniqueFd write_cfi_elf(const format::ElfCfi& cfi) {
  if (elf_version(EV_CURRENT) == EV_NONE)
    throw Error("libelf is unusable");
  UniqueFd fd(memfd_create("ebprof-cfi", MFD_CLOEXEC));
  if (!fd)
    throw_errno("memfd_create", errno);
  std::unique_ptr<Elf, ElfEnd> elf(elf_begin(fd.get(), ELF_C_WRITE, nullptr));
  if (!elf || !gelf_newehdr(elf.get(), ELFCLASS64))
    throw Error(std::string("libelf: ") + elf_errmsg(-1));
  GElf_Ehdr ehdr;
  gelf_getehdr(elf.get(), &ehdr);
  ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
  // A shared object: its module goes where the report says (the recorded
  // mapping's load bias), which for an executable is where it was built.
  ehdr.e_type = ET_DYN;
  ehdr.e_machine = EM_X86_64;
  ehdr.e_version = EV_CURRENT;
  // libdw uses .eh_frame_hdr's search table only when it comes first.
  static const char kNames[] = "\0.eh_frame_hdr\0.eh_frame\0.shstrtab";
  std::string assembled_hdr, assembled;
  if (cfi.eh_frame.empty() && !cfi.pieces.empty())
    assemble(cfi, assembled_hdr, assembled);
  const std::string& hdr = assembled_hdr.empty() ? cfi.eh_frame_hdr : assembled_hdr;
  if (!hdr.empty())
    add_section(elf.get(), 1, cfi.eh_frame_hdr_address, hdr);
  add_section(elf.get(), 15, cfi.eh_frame_address, assembled.empty() ? cfi.eh_frame : assembled);
  Elf_Scn* names = elf_newscn(elf.get());
  Elf_Data* data = names ? elf_newdata(names) : nullptr;
  if (!data)
    throw Error(std::string("libelf: ") + elf_errmsg(-1));
  data->d_buf = const_cast<char*>(kNames);
  data->d_size = sizeof kNames;
  data->d_type = ELF_T_BYTE;
  GElf_Shdr shdr{};
  shdr.sh_name = 25;
  shdr.sh_type = SHT_STRTAB;
  gelf_update_shdr(names, &shdr);
  ehdr.e_shstrndx = elf_ndxscn(names);
  gelf_update_ehdr(elf.get(), &ehdr);
  // After the header update: an earlier one resets e_phnum.
  if (!gelf_newphdr(elf.get(), cfi.segments.size()))
    throw Error(std::string("libelf: ") + elf_errmsg(-1));
  for (size_t i = 0; i < cfi.segments.size(); ++i) {
    GElf_Phdr ph{};
    ph.p_type = PT_LOAD;
    ph.p_flags = PF_R | PF_X;
    ph.p_vaddr = ph.p_paddr = cfi.segments[i].vaddr;
    ph.p_memsz = cfi.segments[i].file_size;
    ph.p_align = 0x1000;
    gelf_update_phdr(elf.get(), static_cast<int>(i), &ph);
  }
  if (elf_update(elf.get(), ELF_C_WRITE) < 0)
    throw Error(std::string("libelf: ") + elf_errmsg(-1));
  elf.reset();
  lseek(fd.get(), 0, SEEK_SET);
  return fd;
}

}  // namespace ebprof::report
