#include "report/stack_filter.h"

#include <algorithm>
#include <iterator>

namespace ebprof::report {

void filter_stacks(const StackFilter& f, std::vector<SymbolizedStack>& stacks) {
  for (SymbolizedStack& s : stacks) {
    if (f.kernel_only || f.user_only) {
      std::vector<Frame> kept;
      std::copy_if(s.frames.begin(), s.frames.end(), std::back_inserter(kept),
                   [&](const Frame& fr) {
                     // The [off-cpu: STATE] root belongs to both halves.
                     return fr.module == "[off-cpu]" || !(fr.kernel ? f.user_only : f.kernel_only);
                   });
      s.frames = std::move(kept);
    }
  }
  std::erase_if(stacks, [&](const SymbolizedStack& s) {
    if (s.frames.empty() && (f.kernel_only || f.user_only))
      return true;
    if (!f.dsos.empty() && std::none_of(s.frames.begin(), s.frames.end(), [&](const Frame& fr) {
          return std::find(f.dsos.begin(), f.dsos.end(), fr.module) != f.dsos.end();
        }))
      return true;
    if (f.symbol && std::none_of(s.frames.begin(), s.frames.end(), [&](const Frame& fr) {
          // libstdc++'s matcher recurses per character: a crafted
          // recording's megabyte-long name must not exhaust the stack.
          constexpr size_t kMaxMatched = 4096;
          return std::regex_search(
              fr.name.begin(), fr.name.begin() + std::min(fr.name.size(), kMaxMatched), *f.symbol);
        }))
      return true;
    return false;
  });
}

}  // namespace ebprof::report
