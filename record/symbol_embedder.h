#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>

#include "format/recording.h"

namespace ebprof::record {

// Picks the ELF symbol tables a recording embeds: each mapped file that a
// sampled stack passes through, once per build-id, read while the process
// that maps it is alive. Files without a build-id are not embedded: nothing
// could tell a reader which binary the table belongs to.
class SymbolEmbedder {
 public:
  // The table of the file mapped at `m` in `pid` the first time its build-id
  // is seen; nullopt afterwards, or when it cannot be read.
  std::optional<format::EmbeddedSymbols> take(uint32_t pid, const format::Mapping& m);

 private:
  std::unordered_set<std::string> seen_;  // build-ids
};

}  // namespace ebprof::record
