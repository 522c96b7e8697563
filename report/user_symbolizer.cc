#include "report/user_symbolizer.h"

#include <algorithm>

#include "common/error.h"
#include "report/debuginfo.h"
#include "report/demangle.h"
#include "report/profile.h"
#include "report/text.h"

namespace ebprof::report {
namespace {

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// An unnamed frame: where it is and, when known, why it has no name.
Frame unknown(const std::string& module, const std::string& where, const std::string& why) {
  Frame f{"[unknown] (" + where + (why.empty() ? "" : ", " + why) + ")", module, false, false};
  f.reason = why.empty() ? "no symbol" : why;
  return f;
}

// objcopy --only-keep-debug empties the loadable segments: a debuginfo file
// alone cannot turn a mapping's file offset into an address.
bool has_file_offsets(const ElfSymbolTable& t) {
  return std::any_of(t.segments().begin(), t.segments().end(),
                     [](const LoadSegment& s) { return s.file_size > 0 && s.offset > 0; });
}

}  // namespace

UserSymbolizer::UserSymbolizer(const std::unordered_map<std::string, ElfSymbolTable>& embedded,
                               const std::unordered_map<uint32_t, std::vector<ElfSymbol>>& jit,
                               SymbolizeOptions options)
    : embedded_(embedded), jit_(&jit), options_(std::move(options)) {}

bool UserSymbolizer::matches_locally(const std::vector<std::string>& candidates,
                                     const std::string& build_id) {
  return std::any_of(candidates.begin(), candidates.end(), [&](const std::string& path) {
    const ElfSymbolTable* t = file(path);
    return t && t->identity().build_id == build_id;
  });
}

const ElfSymbolTable* UserSymbolizer::file(const std::string& path) {
  auto [it, inserted] = files_.try_emplace(path);
  if (inserted) {
    try {
      it->second = std::make_unique<ElfSymbolTable>(ElfSymbolTable::load(path));
    } catch (const Error&) {
      // Missing, not ELF, not a regular file: the caller says "not found".
    }
  }
  return it->second.get();
}

const UserSymbolizer::Choice& UserSymbolizer::choose(const format::Mapping& m) {
  auto [it, inserted] = choices_.try_emplace({m.path, m.build_id});
  Choice& c = it->second;
  if (!inserted)
    return c;
  // The file on this machine must be the build that ran: a rebuild, an
  // upgrade or another machine's copy would name the wrong functions. Its
  // build-id must equal the recorded one. A binary built without one (Go,
  // --build-id=none) cannot be verified: it is used, as perf would, but
  // said so once, since only the user can know it was not rebuilt. A
  // deleted file is never on disk; its embedded table still names it.
  const bool deleted = m.path.ends_with(" (deleted)");
  const std::string path = binary_path(options_.sources, m.path);
  const ElfSymbolTable* on_disk = deleted ? nullptr : file(path);
  const bool matches = on_disk && on_disk->identity().build_id == m.build_id;
  if (on_disk && !matches && options_.warn)
    options_.warn(path + " is not the build that was recorded (build-id " +
                  hex_bytes(on_disk->identity().build_id) + ", recorded " + hex_bytes(m.build_id) +
                  "): not used for its names");
  if (matches && m.build_id.empty() && options_.warn)
    options_.warn(path +
                  " has no build-id: its names are used unverified; if it was rebuilt "
                  "since recording, they may be wrong");
  // Separate debuginfo holds the full .symtab (local functions included),
  // which a stripped binary and the embedded table lack: it goes first.
  // Only with a known build-id: a debuglink name alone proves nothing.
  const ElfSymbolTable* debug = nullptr;
  std::string debug_path;
  std::vector<std::string> candidates =
      m.build_id.empty() ? std::vector<std::string>{}
                         : debuginfo_paths(options_.sources, m.path, m.build_id, m.debuglink);
  // Last, and only when nothing local has it: a server, which may be slow.
  if (options_.debuginfod && !m.build_id.empty() && debuginfod_queries_ < kMaxDebuginfodQueries &&
      !matches_locally(candidates, m.build_id)) {
    ++debuginfod_queries_;
    if (std::string fetched = options_.debuginfod(m.build_id); !fetched.empty())
      candidates.push_back(fetched);
  }
  if (!m.build_id.empty())
    for (const std::string& candidate : candidates) {
      const ElfSymbolTable* t = file(candidate);
      if (t && t->identity().build_id == m.build_id) {
        debug = t;
        debug_path = candidate;
        break;
      }
    }
  auto embedded = m.build_id.empty() ? embedded_.end() : embedded_.find(m.build_id);
  c.layout = matches ? on_disk : embedded != embedded_.end() ? &embedded->second : nullptr;
  c.table = debug ? debug : c.layout;
  if (embedded != embedded_.end())
    c.embedded = &embedded->second;
  if (debug)
    c.dwarf = debug_path;
  else if (matches)
    c.dwarf = path;
  if (!c.layout && debug && has_file_offsets(*debug))
    c.layout = debug;
  if (!c.table || !c.layout) {
    c.table = c.layout = nullptr;
    c.why = on_disk ? "build-id mismatch" : "binary not found";
  }
  return c;
}

const std::string& UserSymbolizer::name_of(const ElfSymbol& sym) {
  auto [it, inserted] = demangled_.try_emplace(&sym);
  if (inserted)
    it->second = options_.demangle ? demangle(sym.name) : sym.name;
  return it->second;
}

std::optional<Frame> UserSymbolizer::resolve_jit(uint32_t pid, uint64_t address, uint64_t lookup) {
  auto table = jit_->find(pid);
  if (table == jit_->end())
    return std::nullopt;
  const ElfSymbol* it = find_symbol(table->second, lookup);
  if (!it)
    return std::nullopt;
  // perf names the module after the map file.
  std::string map = "perf-" + std::to_string(pid) + ".map";
  return Frame{name_of(*it),          map,           false,    true, address,
               address - it->address, "/tmp/" + map, it->name, "",   address};
}

Frame UserSymbolizer::resolve(std::span<const format::ProcessInfo> captures, uint64_t address,
                              uint64_t lookup) {
  return resolve(captures, address, lookup, nullptr);
}

const std::vector<SourceFrame>& UserSymbolizer::source_frames(const std::string& file,
                                                              uint64_t vaddr) {
  auto [it, inserted] = source_.try_emplace({file, vaddr});
  if (inserted) {
    auto [dwarf, opened] = dwarf_.try_emplace(file);
    if (opened)
      dwarf->second = DwarfLines::open(file);
    if (dwarf->second)
      it->second = dwarf->second->frames(vaddr);
  }
  return it->second;
}

void UserSymbolizer::resolve_all(std::span<const format::ProcessInfo> captures, uint64_t address,
                                 uint64_t lookup, std::vector<Frame>& out) {
  Located located;
  Frame base = resolve(captures, address, lookup, &located);
  const std::vector<SourceFrame>* source =
      base.resolved && located.choice && !located.choice->dwarf.empty() &&
              (options_.inline_frames || options_.lines)
          ? &source_frames(located.choice->dwarf, located.vaddr)
          : nullptr;
  if (!source || source->empty()) {
    out.push_back(std::move(base));
    return;
  }
  for (const SourceFrame& s : *source) {
    // An inlined instance DWARF gives no name would otherwise take the
    // containing function's: it is left out rather than named twice.
    if (s.inlined && (s.function.empty() || !options_.inline_frames))
      continue;
    Frame f = base;
    if (!s.function.empty()) {
      f.system_name = s.function;
      f.name = options_.demangle ? demangle(s.function) : s.function;
    }
    f.inlined = s.inlined;
    f.file = s.file;
    f.line = s.line;
    if (options_.lines && s.line > 0) {
      f.name += ' ';
      f.name += basename_of(s.file);
      f.name += ':';
      f.name += std::to_string(s.line);
    }
    out.push_back(std::move(f));
  }
}

Frame UserSymbolizer::resolve(std::span<const format::ProcessInfo> captures, uint64_t address,
                              uint64_t lookup, Located* located) {
  Frame f = name(captures, address, lookup, located);
  f.address = address;
  // Not in a file (anonymous, unmapped): the address is all there is.
  if (f.path.empty())
    f.file_offset = address;
  return f;
}

Frame UserSymbolizer::name(std::span<const format::ProcessInfo> captures, uint64_t address,
                           uint64_t lookup, Located* located) {
  if (captures.empty())
    return unknown("[unknown]", hex(address), "process maps not recorded");
  const format::Mapping* m = find_mapping(captures, lookup);
  if (!m || m->path.empty())
    if (std::optional<Frame> jit = resolve_jit(captures.front().pid, address, lookup))
      return *jit;
  if (!m) {
    const std::string& why = captures.front().maps_error;
    return unknown("[unknown]", hex(address), why.empty() ? "no mapping" : why);
  }
  // Anonymous executable memory is JIT code, named only by a perf map.
  if (m->path.empty())
    return unknown("[anon]", "[anon]+" + hex(address - m->start), "JIT map missing");
  std::string module = basename_of(m->path);
  const uint64_t file_offset = address - m->start + m->file_offset;
  const std::string where = module + "+" + hex(file_offset);
  // Pseudo-files ([vdso]) have no ELF file.
  const Choice* choice = m->path[0] == '/' ? &choose(*m) : nullptr;
  const std::optional<uint64_t> mapped_vaddr =
      choice && choice->table ? choice->layout->offset_to_vaddr(lookup - m->start + m->file_offset)
                              : std::nullopt;
  const uint64_t vaddr = mapped_vaddr.value_or(0);
  const ElfSymbol* sym = mapped_vaddr ? choice->table->find(vaddr) : nullptr;
  Frame f = unknown(module, where,
                    !choice                             ? ""
                    : sym                               ? ""
                    : !choice->why.empty()              ? choice->why
                    : choice->table->complete()         ? ""
                    : choice->table == choice->embedded ? "no symbol in the embedded table"
                                                        : "stripped without debuginfo");
  f.path = m->path;
  f.build_id = m->build_id;
  f.file_offset = file_offset;
  if (!sym)
    return f;
  if (located)
    *located = {choice, vaddr};
  f.name = name_of(*sym);
  f.reason.clear();
  f.system_name = sym->name;
  f.resolved = true;
  f.offset = vaddr + (address - lookup) - sym->address;
  return f;
}

}  // namespace ebprof::report
