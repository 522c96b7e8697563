#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ebprof::report {

struct MergeResult {
  uint64_t sources = 0;  // recordings in the output (a merged input counts its own)
  uint64_t samples = 0;
  std::vector<std::string> warnings;  // one per damaged or cut input
};

// Writes the recordings `inputs` into one merged file at `output`: each
// input's frames, in their order, after a Source frame naming it (a merged
// input's sources stay sources of their own), so every sample keeps its
// source, its time order and its ids; embedded symbol tables once per
// build-id, each symbol once. It streams: one frame in memory at a time,
// plus the addresses of the symbols written. Throws Error for an input that
// is not a recording or an output that cannot be written; the partial
// output is then removed.
MergeResult merge_recordings(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace ebprof::report
