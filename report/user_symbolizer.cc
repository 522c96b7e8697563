#include "report/user_symbolizer.h"

#include <algorithm>

#include "common/error.h"
#include "report/demangle.h"
#include "report/profile.h"
#include "report/text.h"

namespace ebprof::report {
namespace {

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Frame unknown(const std::string& module, const std::string& where) {
  return Frame{"[unknown] (" + where + ")", module, false, false};
}

}  // namespace

UserSymbolizer::UserSymbolizer(const std::unordered_map<std::string, ElfSymbolTable>& embedded,
                               const std::unordered_map<uint32_t, std::vector<ElfSymbol>>& jit)
    : embedded_(embedded), jit_(jit) {}

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
  // build-id must equal the recorded one, also when that is empty (the file
  // had none, or could not be read then): an unverifiable file is not used.
  // A deleted file is never on disk; its embedded table still names it.
  const bool deleted = m.path.ends_with(" (deleted)");
  const ElfSymbolTable* on_disk = deleted ? nullptr : file(m.path);
  if (on_disk && on_disk->identity().build_id == m.build_id) {
    c.table = on_disk;
  } else if (auto e = embedded_.find(m.build_id); !m.build_id.empty() && e != embedded_.end()) {
    c.table = &e->second;
  } else {
    c.why = on_disk ? "build-id mismatch" : "binary not found";
  }
  return c;
}

std::optional<Frame> UserSymbolizer::resolve_jit(uint32_t pid, uint64_t address, uint64_t lookup) {
  auto table = jit_.find(pid);
  if (table == jit_.end())
    return std::nullopt;
  const ElfSymbol* it = find_symbol(table->second, lookup);
  if (!it)
    return std::nullopt;
  auto [name, inserted] = demangled_.try_emplace(it);
  if (inserted)
    name->second = demangle(it->name);
  // perf names the module after the map file.
  std::string map = "perf-" + std::to_string(pid) + ".map";
  return Frame{name->second,          map,           false,    true, address,
               address - it->address, "/tmp/" + map, it->name, "",   address};
}

Frame UserSymbolizer::resolve(std::span<const format::ProcessInfo> captures, uint64_t address,
                              uint64_t lookup) {
  if (captures.empty())
    return unknown("[unknown]", hex(address) + ", process maps not recorded");
  const format::Mapping* m = find_mapping(captures, lookup);
  if (!m || m->path.empty())
    if (std::optional<Frame> jit = resolve_jit(captures.front().pid, address, lookup))
      return *jit;
  if (!m) {
    const std::string& why = captures.front().maps_error;
    return unknown("[unknown]", hex(address) + ", " + (why.empty() ? "no mapping" : why));
  }
  // Anonymous executable memory is JIT code, named only by a perf map.
  if (m->path.empty())
    return unknown("[anon]", "[anon]+" + hex(address - m->start) + ", JIT map missing");
  std::string module = basename_of(m->path);
  std::string where = module + "+" + hex(address - m->start + m->file_offset);
  Frame f = unknown(module, where);
  f.path = m->path;
  f.build_id = m->build_id;
  f.file_offset = address - m->start + m->file_offset;
  // Pseudo-files ([vdso]) have no ELF file.
  if (m->path[0] != '/')
    return f;
  const Choice& choice = choose(*m);
  if (!choice.table) {
    f.name.insert(f.name.size() - 1, ", " + choice.why);
    return f;
  }
  auto vaddr = choice.table->offset_to_vaddr(lookup - m->start + m->file_offset);
  const ElfSymbol* sym = vaddr ? choice.table->find(*vaddr) : nullptr;
  if (!sym)
    return f;
  auto [it, inserted] = demangled_.try_emplace(sym);
  if (inserted)
    it->second = demangle(sym->name);
  f.name = it->second;
  f.system_name = sym->name;
  f.resolved = true;
  f.offset = *vaddr + (address - lookup) - sym->address;
  return f;
}

}  // namespace ebprof::report
