#include "record/cfi_embedder.h"

#include "common/elf_file.h"
#include "common/error.h"
#include "record/elf_identities.h"

namespace ebprof::record {

void CfiEmbedder::take(const format::ProcessInfo& process) {
  for (const format::Mapping& m : process.mappings) {
    if (m.build_id.empty() || !done_.insert(m.build_id).second)
      continue;
    for (const MappedFile& file : build_id_checked_paths(process.pid, m)) {
      const std::string& path = file.path;
      try {
        ElfUnwindTables t = read_unwind_tables(path);
        // The path may name a newer file than the one mapped.
        if (t.identity.build_id != m.build_id)
          continue;
        if (!t.eh_frame.empty())
          pending_.push_back({m.build_id, m.path, std::move(t.segments), t.eh_frame_hdr_address,
                              std::move(t.eh_frame_hdr), t.eh_frame_address,
                              std::move(t.eh_frame)});
        break;
      } catch (const Error&) {
        // Gone or unreadable through this path: try the next.
      }
    }
  }
}

std::vector<format::ElfCfi> CfiEmbedder::drain() {
  return std::exchange(pending_, {});
}

}  // namespace ebprof::record
