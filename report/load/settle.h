#pragma once

// Settling: what the load, and the script's second pass, hand each batch's
// stacks to as the file streams, so that samples whose windows unwind
// alike count as one key, and their windows can be let go.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "report/load/id_runs.h"
#include "report/load/recording.h"

namespace ebprof::report {

// Turns each of `refs` (stacks of `recording`, their windows in `windows`)
// into the ref that stands for it, and starts later stages on what they
// will need: the report's stack resolver does both. Without one, keys keep
// their windows.
using SettleStacks = std::function<void(const Recording&, const IdRuns<format::UserWindow>& windows,
                                        std::span<StackRef> refs)>;

// Settles the stacks of `keyed` (pairs whose .first is a SampleKey) with
// `settle`.
template <typename Keyed>
void settle_keys(const SettleStacks& settle, const Recording& recording,
                 const IdRuns<format::UserWindow>& windows, Keyed& keyed) {
  std::vector<StackRef> refs;
  refs.reserve(keyed.size());
  for (const auto& k : keyed)
    refs.push_back(k.first.stack);
  settle(recording, windows, refs);
  auto settled = refs.begin();
  for (auto& k : keyed)
    k.first.stack = *settled++;
}

// The windows a batch whose first window id is `first` may use: of
// `info`'s recording, the ids from the returned one on.
inline uint32_t first_window_reached(const format::RecordingInfo& info, uint64_t first) {
  return info.window_reach == 0 || first < info.window_reach
             ? 0
             : static_cast<uint32_t>(std::min<uint64_t>(UINT32_MAX, first - info.window_reach));
}

}  // namespace ebprof::report
