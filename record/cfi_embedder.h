#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "format/contents.h"

namespace ebprof::record {

// Picks the call frame information a --call-graph dwarf recording embeds:
// that of every ELF file a sampled process maps, once per build-id, read
// from the very file mapped while the process is alive, else from its path
// if the build-id there is the same. A report then unwinds the recording
// without the files. Which frames a window holds is only known once it is
// unwound, so every mapped file's tables go in, not just those of the
// sampled addresses.
class CfiEmbedder {
 public:
  void take(const format::ProcessInfo& process);
  // The tables not written yet.
  std::vector<format::ElfCfi> drain();
  size_t binaries() const { return done_.size(); }
  // Every binary new again: a new file (--switch-output) holds its own.
  void forget() { done_.clear(); }

 private:
  std::set<std::string> done_;  // build-ids looked at, found or not
  std::vector<format::ElfCfi> pending_;
};

}  // namespace ebprof::record
