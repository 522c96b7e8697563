#include "record/cfi_embedder.h"

#include <cstring>

#include "common/error.h"
#include "record/elf_identities.h"

namespace ebprof::record {

// One binary's tables, open for the run, and what of them the file under
// way holds.
struct CfiEmbedder::Binary {
  std::string build_id;
  std::string path;  // where it was mapped, for display
  ElfUnwindTables tables;
  std::optional<EhFrameIndex> index;  // none: the tables go in whole
  bool in_file = false;               // something of it is in the file under way
  bool whole_taken = false, whole_pending = false;
  std::unordered_set<uint64_t> taken;  // offsets of the entries in the file under way
  std::vector<format::CfiPiece> pending;
};

CfiEmbedder::CfiEmbedder() = default;
CfiEmbedder::~CfiEmbedder() = default;
CfiEmbedder::CfiEmbedder(CfiEmbedder&&) noexcept = default;
CfiEmbedder& CfiEmbedder::operator=(CfiEmbedder&&) noexcept = default;

CfiEmbedder::Binary* CfiEmbedder::binary(uint32_t pid, const format::Mapping& m) {
  if (m.build_id.empty())
    return nullptr;
  if (binaries_.size() >= kMaxBinaries && !binaries_.contains(m.build_id)) {
    // Those with pieces not written yet stay; the others, if taken again
    // in the same file, only repeat some bytes.
    std::erase_if(binaries_, [](const auto& b) {
      return !b.second || (b.second->pending.empty() && !b.second->whole_pending);
    });
    if (binaries_.size() >= kMaxBinaries)
      binaries_.clear();
  }
  auto [it, inserted] = binaries_.try_emplace(m.build_id);
  if (!inserted)
    return it->second.get();
  for (const MappedFile& file : build_id_checked_paths(pid, m)) {
    try {
      ElfUnwindTables t = read_unwind_tables(file.path);
      // The path may name a newer file than the one mapped.
      if (t.identity.build_id != m.build_id)
        continue;
      if (t.eh_frame.empty())
        break;
      auto b = std::make_unique<Binary>();
      b->build_id = m.build_id;
      b->path = m.path;
      b->index = EhFrameIndex::parse(t.eh_frame_hdr, t.eh_frame_hdr_address);
      b->tables = std::move(t);
      it->second = std::move(b);
      break;
    } catch (const Error&) {
      // Gone or unreadable through this path: try the next.
    }
  }
  return it->second.get();
}

void CfiEmbedder::take(const format::ProcessInfo& process) {
  for (const format::Mapping& m : process.mappings)
    binary(process.pid, m);
}

void CfiEmbedder::take_pc(uint32_t pid, uint64_t pc, const ProcessTracker& tracker) {
  const format::Mapping* m = tracker.mapping_at(pid, pc);
  Binary* b = m ? binary(pid, *m) : nullptr;
  if (!b)
    return;
  if (std::optional<uint64_t> vaddr =
          offset_to_vaddr(b->tables.segments, pc - m->start + m->file_offset))
    take_vaddr(*b, *vaddr);
}

void CfiEmbedder::take_words(uint32_t pid, std::span<const std::byte> bytes,
                             const ProcessTracker& tracker) {
  for (size_t at = 0; at + sizeof(uint64_t) <= bytes.size(); at += sizeof(uint64_t)) {
    uint64_t word = 0;
    std::memcpy(&word, bytes.data() + at, sizeof word);  // a copy: its bytes need no alignment
    if (word > 1)
      take_pc(pid, word - 1, tracker);
  }
}

void CfiEmbedder::take_vaddr(Binary& b, uint64_t vaddr) {
  if (!b.index) {
    if (!b.whole_taken)
      b.whole_taken = b.whole_pending = true;
    return;
  }
  const std::optional<EhFrameIndex::Fde> fde = b.index->find(vaddr);
  if (fde && fde->address >= b.tables.eh_frame_address)
    take_entry(b, fde->address - b.tables.eh_frame_address, fde->pc);
}

void CfiEmbedder::take_entry(Binary& b, uint64_t offset, std::optional<uint64_t> pc) {
  if (!b.taken.insert(offset).second)
    return;
  const std::optional<EhFrameEntry> entry = eh_frame_entry(b.tables.eh_frame, offset);
  if (!entry || entry->cie_offset.has_value() != pc.has_value())
    return;  // not what the index said: nothing a report could use
  if (entry->cie_offset)
    take_entry(b, *entry->cie_offset, std::nullopt);
  b.pending.push_back(
      {offset, std::string(reinterpret_cast<const char*>(entry->bytes.data()), entry->bytes.size()),
       pc.has_value(), pc.value_or(0)});
}

std::vector<format::ElfCfi> CfiEmbedder::drain() {
  std::vector<format::ElfCfi> out;
  for (auto& [build_id, b] : binaries_) {
    if (!b || (b->pending.empty() && !b->whole_pending))
      continue;
    const ElfUnwindTables& t = b->tables;
    format::ElfCfi& cfi = out.emplace_back();
    cfi.build_id = build_id;
    cfi.path = b->path;
    cfi.segments = t.segments;
    cfi.eh_frame_hdr_address = t.eh_frame_hdr_address;
    cfi.eh_frame_address = t.eh_frame_address;
    if (b->whole_pending) {
      cfi.eh_frame_hdr.assign(reinterpret_cast<const char*>(t.eh_frame_hdr.data()),
                              t.eh_frame_hdr.size());
      cfi.eh_frame.assign(reinterpret_cast<const char*>(t.eh_frame.data()), t.eh_frame.size());
    } else {
      cfi.eh_frame_size = t.eh_frame.size();
      cfi.pieces = std::move(b->pending);
    }
    in_file_ += !b->in_file;
    b->in_file = true;
    b->whole_pending = false;
    b->pending.clear();
  }
  return out;
}

void CfiEmbedder::forget() {
  for (auto& [build_id, b] : binaries_)
    if (b) {
      b->in_file = b->whole_taken = b->whole_pending = false;
      b->taken.clear();
      b->pending.clear();
    }
  in_file_ = 0;
}

}  // namespace ebprof::record
