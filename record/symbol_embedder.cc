#include "record/symbol_embedder.h"

#include "common/error.h"
#include "record/elf_identities.h"

namespace ebprof::record {

std::optional<format::EmbeddedSymbols> SymbolEmbedder::take(uint32_t pid,
                                                            const format::Mapping& m) {
  if (m.build_id.empty() || !seen_.insert(m.build_id).second)
    return std::nullopt;
  for (const std::string& path : mapped_file_paths(pid, m)) {
    try {
      ElfSymbolTable table = ElfSymbolTable::load(path);
      // The path may name a newer file than the one mapped: embed only the one
      // that ran.
      if (table.identity().build_id != m.build_id)
        continue;
      return format::EmbeddedSymbols{m.build_id, m.path, table.segments(), table.symbols()};
    } catch (const Error&) {
      // Gone or unreadable through this path: try the next.
    }
  }
  return std::nullopt;
}

}  // namespace ebprof::record
