#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "format/contents.h"

namespace ebprof::format {

// Loss counts summed by cause over CPUs (and over reports), in order of
// first appearance; the CPU of each total is kNoCpu. The recorder's end
// frame and a report on a file without one both total this way.
inline std::vector<LossCount> totals_by_cause(std::span<const LossCount> counts) {
  std::vector<LossCount> totals;
  for (const LossCount& l : counts) {
    auto it = std::find_if(totals.begin(), totals.end(),
                           [&](const LossCount& t) { return t.cause == l.cause; });
    if (it == totals.end())
      it = totals.insert(totals.end(), {l.cause, 0, l.sample_kept});
    it->count += l.count;
  }
  return totals;
}

}  // namespace ebprof::format
