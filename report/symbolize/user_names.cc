#include "report/symbolize/user_names.h"

#include "common/perf_map.h"

#include <algorithm>

#include "report/model/process_maps.h"
#include "report/symbolize/demangle.h"

namespace ebprof::report {
namespace {

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Frame unnamed(FrameKind kind, UnnamedReason reason, std::string module, uint64_t address) {
  Frame f;
  f.kind = kind;
  f.reason = reason;
  f.module = std::move(module);
  f.address = address;
  f.file_offset = address;  // not in a file: the address is all there is
  return f;
}

}  // namespace

UnnamedReason unmapped_reason(const std::string& maps_error) {
  if (maps_error.empty())
    return UnnamedReason::kNoMapping;
  if (maps_error == format::kMapsErrorExited)
    return UnnamedReason::kExitedBeforeMapsRead;
  if (maps_error == format::kMapsErrorForkedUnread)
    return UnnamedReason::kForkedFromUnreadProcess;
  return UnnamedReason::kMapsUnreadable;
}

UserNames::UserNames(const SymbolizeOptions& options, FileFinder& files)
    : options_(options),
      files_(files),
      dwarf_(InflatedCache{.dir = options.cache_dir, .warn = options.warn}) {}

const std::string& UserNames::name_of(const ElfSymbol& sym) {
  auto [it, inserted] = demangled_.try_emplace(&sym);
  if (inserted)
    it->second = options_.demangle ? demangle(sym.name) : sym.name;
  return it->second;
}

Frame UserNames::name_in_file(const ProcessSymbols& space, const format::Mapping& m,
                              uint64_t address, uint64_t lookup, Located* located) {
  Frame f;
  f.module = basename_of(m.path);
  f.address = address;
  f.path = m.path;
  f.build_id = m.build_id;
  f.file_offset = address - m.start + m.file_offset;
  // Pseudo-files have no ELF file, unless the recording gives one a
  // build-id: the vDSO, an ELF image the recorder embeds.
  const bool elf = m.path[0] == '/' || !m.build_id.empty();
  const FoundBinary* binary = elf ? &files_.find(m, *space.embedded) : nullptr;
  const std::optional<uint64_t> vaddr =
      binary && binary->symbols ? binary->layout->offset_to_vaddr(lookup - m.start + m.file_offset)
                                : std::nullopt;
  const ElfSymbol* sym = vaddr ? binary->symbols->find(*vaddr) : nullptr;
  if (!sym) {
    f.reason = !binary                                   ? UnnamedReason::kNoSymbol
               : binary->missing != UnnamedReason::kNone ? binary->missing
               : binary->symbols->complete()             ? UnnamedReason::kNoSymbol
               : binary->symbols == binary->embedded     ? UnnamedReason::kNotInEmbeddedTable
                                                         : UnnamedReason::kStripped;
    return f;
  }
  if (located)
    *located = {binary, *vaddr};
  f.name = name_of(*sym);
  f.system_name = sym->name;
  f.offset = *vaddr + (address - lookup) - sym->address;
  return f;
}

Frame UserNames::locate(const ProcessSymbols& space, uint64_t address, uint64_t lookup,
                        Located* located) {
  if (space.captures.empty())
    return unnamed(FrameKind::kNative, UnnamedReason::kMapsNotRecorded, "[unknown]", address);
  const format::Mapping* m = mapping_in(space.captures, lookup);
  // JIT code: named from the process's perf map, if it was recorded, or
  // one it left on this host in the boot it was recorded in.
  const std::vector<ElfSymbol>* jit = space.jit;
  if (m && m->path.empty() && (!jit || !find_symbol(*jit, lookup)) && space.recording)
    if (const std::vector<ElfSymbol>* left =
            files_.left_perf_map(space.captures.front(), *space.recording))
      jit = left;
  if ((!m || m->path.empty()) && jit)
    if (const ElfSymbol* sym = find_symbol(*jit, lookup)) {
      // perf names the module after the map file.
      const std::string path = perf_map_path(space.captures.front().pid);
      Frame f{.kind = FrameKind::kJit,
              .address = address,
              .offset = address - sym->address,
              .file_offset = address,
              .name = name_of(*sym),
              .system_name = sym->name,
              .module = path.substr(path.rfind('/') + 1),
              .path = path};
      return f;
    }
  if (!m)
    return unnamed(FrameKind::kNative, unmapped_reason(space.captures.front().maps_error),
                   "[unknown]", address);
  // Anonymous executable memory is JIT code, named only by a perf map.
  if (m->path.empty()) {
    Frame f = unnamed(FrameKind::kJit, UnnamedReason::kJitMapMissing, "[anon]", address);
    f.offset = address - m->start;
    return f;
  }
  return name_in_file(space, *m, address, lookup, located);
}

Frame UserNames::name_one(const ProcessSymbols& space, uint64_t address, uint64_t lookup) {
  return locate(space, address, lookup, nullptr);
}

const std::vector<SourceFrame>& UserNames::source_frames(const std::string& file, uint64_t vaddr) {
  auto [it, inserted] = source_.try_emplace({file, vaddr});
  if (inserted) {
    if (DwarfLines* dwarf = dwarf_.get(file))
      it->second = dwarf->frames(vaddr);
  }
  return it->second;
}

void UserNames::prefetch(const ProcessSymbols& space, uint64_t lookup) {
  const format::Mapping* m = mapping_in(space.captures, lookup);
  if (!m || m->path.empty() || m->path[0] != '/' || !prefetched_.insert(m).second)
    return;
  // Servers are asked now, all at once; their answers are waited for when
  // the names need them.
  if (files_.request(*m) || (!options_.inline_frames && !options_.lines))
    return;
  // The recording may still be loading: what it embeds is not final, and
  // a binary's DWARF file does not depend on it.
  if (const std::string& dwarf = files_.dwarf_of(*m); !dwarf.empty())
    dwarf_.prefetch(dwarf);
}

void UserNames::name(const ProcessSymbols& space, uint64_t address, uint64_t lookup,
                     std::vector<Frame>& out) {
  Located located;
  Frame base = locate(space, address, lookup, &located);
  const std::vector<SourceFrame>* source =
      base.named() && located.binary && !located.binary->dwarf.empty() &&
              (options_.inline_frames || options_.lines)
          ? &source_frames(located.binary->dwarf, located.vaddr)
          : nullptr;
  if (!source || source->empty()) {
    out.push_back(std::move(base));
    return;
  }
  const SourceFrame* place = nullptr;  // where execution is, from a frame left out
  for (size_t i = 0; i < source->size(); ++i) {
    const SourceFrame& s = (*source)[i];
    // An inlined instance DWARF gives no name would otherwise take the
    // containing function's: it is left out rather than named twice. So is
    // a function inlined into itself (glibc's read, split by the compiler:
    // read;__GI___libc_read), whose place goes to the frame around it.
    const bool into_itself =
        s.inlined && i + 1 < source->size() && s.function == (*source)[i + 1].function;
    if (s.inlined && (s.function.empty() || !options_.inline_frames || into_itself)) {
      if (into_itself && !place)
        place = &s;
      continue;
    }
    Frame f = base;
    // The function the address is in keeps its symbol's name, in every
    // mode: the one the symbol table's choice gives (malloc, not DWARF's
    // __libc_malloc; "(anonymous namespace)::work()", not DW_AT_name's
    // bare "work"). DWARF names what was inlined into it.
    if (s.inlined) {
      f.system_name = s.function;
      f.name = options_.demangle ? demangle(s.function) : s.function;
      f.kind = FrameKind::kInlined;
    }
    f.file = place ? place->file : s.file;
    f.line = place ? place->line : s.line;
    place = nullptr;
    if (options_.lines && f.line > 0) {
      f.name += ' ';
      f.name += basename_of(f.file);
      f.name += ':';
      f.name += std::to_string(f.line);
    }
    out.push_back(std::move(f));
  }
}

}  // namespace ebprof::report
