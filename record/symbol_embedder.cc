#include "record/symbol_embedder.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "format/lookup.h"
#include "record/elf_identities.h"
#include "record/host_info.h"

namespace ebprof::record {

SymbolEmbedder::Binary& SymbolEmbedder::binary(uint32_t pid, const format::Mapping& m) {
  if (binaries_.size() >= kMaxBinaries && !binaries_.contains(m.build_id))
    binaries_.clear();
  auto [it, inserted] = binaries_.try_emplace(m.build_id);
  Binary& b = it->second;
  if (!inserted)
    return b;
  b.path = m.path;
  for (const MappedFile& file : build_id_checked_paths(pid, m)) {
    const std::string& path = file.path;
    try {
      ElfSymbolTable table = ElfSymbolTable::load(path);
      // The path may name a newer file than the one mapped: only the build
      // that ran will do.
      if (table.identity().build_id != m.build_id)
        continue;
      b.taken.assign(table.symbols().size(), false);
      b.table = std::move(table);
      break;
    } catch (const Error&) {
      // Gone or unreadable through this path: try the next.
    }
  }
  return b;
}

void SymbolEmbedder::take(uint32_t pid, uint64_t ip, const ProcessTracker& tracker) {
  const format::Mapping* m = tracker.mapping_at(pid, ip);
  // Anonymous executable memory is where JIT compilers put code.
  if (!m || m->path.empty()) {
    take_jit(pid, ip, tracker);
    return;
  }
  if (m->build_id.empty())
    return;
  Binary& b = binary(pid, *m);
  if (!b.table)
    return;
  auto vaddr = b.table->offset_to_vaddr(ip - m->start + m->file_offset);
  const ElfSymbol* sym = vaddr ? b.table->find(*vaddr) : nullptr;
  if (!sym)
    return;
  size_t index = static_cast<size_t>(sym - b.table->symbols().data());
  if (!b.taken[index]) {
    b.taken[index] = true;
    b.pending.push_back(*sym);
  }
}

void SymbolEmbedder::take_new(uint32_t pid, std::span<const uint64_t> user,
                              const ProcessTracker& tracker) {
  for (size_t frame = 0; frame < user.size(); ++frame)
    take(pid, format::lookup_address(user, frame), tracker);
}

void SymbolEmbedder::take_words(uint32_t pid, std::span<const std::byte> bytes,
                                const ProcessTracker& tracker) {
  for (size_t at = 0; at + sizeof(uint64_t) <= bytes.size(); at += sizeof(uint64_t)) {
    uint64_t word = 0;
    std::memcpy(&word, bytes.data() + at, sizeof word);  // a copy: its bytes need no alignment
    if (word > 1 && tracker.mapping_at(pid, word - 1))
      take(pid, word - 1, tracker);
  }
}

void SymbolEmbedder::take_jit(uint32_t pid, uint64_t ip, const ProcessTracker& tracker) {
  const format::ProcessPlace* place = tracker.place(pid);
  static const uint64_t own_mount_namespace = [] {
    struct stat st {};
    return stat("/proc/self/ns/mnt", &st) == 0 ? uint64_t{st.st_ino} : 0;
  }();
  const bool host_tmp =
      place && place->mount_namespace && place->mount_namespace == own_mount_namespace;
  const ElfSymbol* sym =
      jit_maps_.find(pid, place ? place->namespace_pid : 0, ip, monotonic_ns(), host_tmp);
  if (sym && jit_taken_.insert({pid, sym->address, sym->name}).second)
    jit_pending_[pid].push_back(*sym);
}

void SymbolEmbedder::take_named_late(uint32_t pid) {
  for (ElfSymbol& s : jit_maps_.name_missed(pid))
    if (jit_taken_.insert({pid, s.address, s.name}).second)
      jit_pending_[pid].push_back(std::move(s));
}

void SymbolEmbedder::name_missed_jit() {
  for (uint32_t pid : jit_maps_.missed())
    take_named_late(pid);
}

std::vector<format::JitSymbols> SymbolEmbedder::drain_jit() {
  std::vector<format::JitSymbols> out;
  for (auto& [pid, symbols] : jit_pending_)
    out.push_back({pid, std::move(symbols)});
  jit_pending_.clear();
  return out;
}

std::vector<format::EmbeddedSymbols> SymbolEmbedder::drain() {
  std::vector<format::EmbeddedSymbols> out;
  for (auto& [build_id, b] : binaries_) {
    if (b.pending.empty())
      continue;
    embedded_ += !b.written;
    b.written = true;
    out.push_back({build_id, b.path, b.table->segments(), std::move(b.pending)});
    b.pending.clear();
  }
  return out;
}

void SymbolEmbedder::forget_gone(const ProcessTracker& tracker) {
  for (uint32_t pid : jit_maps_.missed())
    if (!tracker.place(pid))
      take_named_late(pid);
  // A symbol is taken only from a process's table: its pid goes with it.
  for (uint32_t pid : jit_maps_.forget_if([&](uint32_t p) { return tracker.place(p) == nullptr; }))
    jit_taken_.erase(jit_taken_.lower_bound({pid, 0, ""}),
                     jit_taken_.lower_bound({pid + 1, 0, ""}));
}

void SymbolEmbedder::forget_taken() {
  std::erase_if(binaries_, [](const auto& entry) {
    const std::vector<bool>& taken = entry.second.taken;
    return std::find(taken.begin(), taken.end(), true) == taken.end();
  });
  for (auto& [build_id, b] : binaries_)
    b.taken.assign(b.taken.size(), false);
  jit_taken_.clear();
}

}  // namespace ebprof::record
