#include "record/leaf_repair.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <libelf.h>

#include <cstdlib>
#include <cstring>

#include "bpf/profile.h"
#include "common/dwarf_cfi.h"
#include "common/error.h"
#include "common/unique_fd.h"
#include "record/elf_identities.h"

namespace ebprof::record {
namespace {

// Where rip and rsp are in the records' registers.
constexpr size_t kIpIndex = 0, kSpIndex = 1;
// Frameless functions calling each other (nanosleep calls clock_nanosleep)
// before frame-pointer code resumes; more would be a walk gone wrong.
constexpr size_t kMaxFramelessCallers = 8;

// N where the row `frame` says the CFA is rsp + N: no frame pointer set up.
std::optional<uint64_t> rsp_cfa(Dwarf_Frame* frame) {
  Dwarf_Op* ops = nullptr;
  size_t nops = 0;
  if (dwarf_frame_cfa(frame, &ops, &nops) != 0)
    return std::nullopt;
  auto rule = cfa_rule(ops, nops);
  if (!rule || rule->base_register != format::kDwarfRsp || rule->offset < 8)
    return std::nullopt;
  return static_cast<uint64_t>(rule->offset);
}

}  // namespace

// One mapped file's call frame information, open while recording.
struct LeafRepair::Binary {
  UniqueFd fd;
  Elf* elf = nullptr;
  Dwarf_CFI* cfi = nullptr;
  std::vector<LoadSegment> segments;

  ~Binary() {
    if (cfi)
      dwarf_cfi_end(cfi);
    if (elf)
      elf_end(elf);
  }
};

LeafRepair::LeafRepair() = default;
LeafRepair::~LeafRepair() = default;

LeafRepair::Binary* LeafRepair::binary(uint32_t pid, const format::Mapping& m) {
  if (binaries_.size() >= kMaxBinaries && !binaries_.contains(m.build_id)) {
    cfas_.clear();  // their keys point into the binaries
    granules_.clear();
    binaries_.clear();
  }
  auto [it, inserted] = binaries_.try_emplace(m.build_id);
  if (!inserted)
    return it->second.get();
  for (const MappedFile& file : build_id_checked_paths(pid, m)) {
    const std::string& path = file.path;
    try {
      // Identity and layout first: the path may name a newer file.
      ElfLayout layout = read_elf_layout(path);
      if (layout.identity.build_id != m.build_id)
        continue;
      auto b = std::make_unique<Binary>();
      b->fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
      b->elf = b->fd ? elf_begin(b->fd.get(), ELF_C_READ_MMAP, nullptr) : nullptr;
      b->cfi = b->elf ? dwarf_getcfi_elf(b->elf) : nullptr;
      if (!b->cfi)
        continue;
      b->segments = std::move(layout.segments);
      it->second = std::move(b);
      break;
    } catch (const Error&) {
      // Gone or unreadable through this path: try the next.
    }
  }
  return it->second.get();
}

std::optional<LeafRepair::Located> LeafRepair::locate(uint32_t pid, const format::Mapping& m,
                                                      uint64_t pc) {
  Binary* b = m.build_id.empty() || m.path.empty() || m.path[0] != '/' ? nullptr : binary(pid, m);
  if (!b)
    return std::nullopt;
  if (std::optional<uint64_t> vaddr = offset_to_vaddr(b->segments, pc - m.start + m.file_offset))
    return Located{b, *vaddr};
  return std::nullopt;
}

std::optional<uint64_t> LeafRepair::frameless_cfa(uint32_t pid, uint64_t pc,
                                                  const ProcessTracker& tracker) {
  const format::Mapping* m = tracker.mapping_at(pid, pc);
  const std::optional<Located> at = m ? locate(pid, *m, pc) : std::nullopt;
  if (!at)
    return std::nullopt;
  auto [it, inserted] = cfas_.try_emplace(Key{at->binary, at->vaddr});
  if (!inserted)
    return it->second;
  Dwarf_Frame* frame = nullptr;
  if (dwarf_cfi_addrframe(at->binary->cfi, at->vaddr, &frame) == 0)
    it->second = rsp_cfa(frame);
  std::free(frame);
  return it->second;
}

std::optional<uint64_t> LeafRepair::frameless_granules(uint32_t pid, uint64_t pc,
                                                       const ProcessTracker& tracker) {
  const format::Mapping* m = tracker.mapping_at(pid, pc);
  if (!m)
    return std::nullopt;
  // Located by the sample's own address: the region's start may lie in
  // another segment (lld puts code at offsets that are not 1 KiB
  // multiples). Load segments keep addresses' offsets within a page, so
  // the region is aligned in the file as in the process.
  constexpr uint64_t kRegion = 1ull << EBPROF_CODE_REGION_SHIFT;
  const std::optional<Located> at = locate(pid, *m, pc);
  if (!at)
    return 0;  // no CFI: a copy of the stack would not help the repair
  const uint64_t base = at->vaddr - pc % kRegion, end = base + kRegion;
  auto [it, inserted] = granules_.try_emplace(Key{at->binary, base});
  if (!inserted)
    return it->second;
  // The region's CFI rows in address order, each covering a range; where
  // none covers an address (padding, code without CFI) the next one is
  // tried.
  uint64_t bits = 0;
  for (uint64_t address = base; address < end;) {
    Dwarf_Frame* frame = nullptr;
    uint64_t next = address + 1;
    if (dwarf_cfi_addrframe(at->binary->cfi, address, &frame) == 0) {
      Dwarf_Addr from = 0, to = 0;
      if (dwarf_frame_info(frame, &from, &to, nullptr) >= 0 && to > address)
        next = std::min(to, end);
      if (rsp_cfa(frame))
        for (uint64_t g = (address - base) >> EBPROF_CODE_GRANULE_SHIFT;
             g <= (next - 1 - base) >> EBPROF_CODE_GRANULE_SHIFT; ++g)
          bits |= 1ull << g;
    }
    std::free(frame);
    address = next;
  }
  it->second = bits;
  return bits;
}

std::span<const uint64_t> LeafRepair::repair(uint32_t pid, std::span<const uint64_t> user,
                                             std::span<const uint64_t> regs,
                                             std::span<const std::byte> stack,
                                             const ProcessTracker& tracker) {
  if (user.empty() || regs.size() <= kSpIndex || regs[kIpIndex] != user.front())
    return user;
  // The walk's next frame, where the frameless ones end: the return
  // address of the function whose frame rbp still points to.
  const uint64_t resumes_at = user.size() > 1 ? user[1] : 0;
  repaired_.assign(1, user.front());
  uint64_t cfa = 0;  // from rsp
  // The leaf by its address, its callers by the call (return address - 1).
  uint64_t pc = user.front();
  while (repaired_.size() <= kMaxFramelessCallers) {
    const std::optional<uint64_t> frame = frameless_cfa(pid, pc, tracker);
    if (!frame || cfa + *frame > stack.size())
      break;
    // CFA = rsp + N: no frame pointer set up. The return address is the
    // last thing the call pushed, just below the CFA (x86-64).
    cfa += *frame;
    uint64_t caller = 0;
    std::memcpy(&caller, stack.data() + cfa - sizeof caller, sizeof caller);
    if (caller == 0 || caller == resumes_at)
      break;
    repaired_.push_back(caller);
    pc = caller - 1;
  }
  if (repaired_.size() == 1)
    return user;
  repaired_.insert(repaired_.end(), user.begin() + 1, user.end());
  if (repaired_.size() > format::kMaxStackFrames)
    repaired_.resize(format::kMaxStackFrames);
  return repaired_;
}

}  // namespace ebprof::record
