#include "report/aggregate/stack_filter.h"

#include <algorithm>

namespace ebprof::report {

std::optional<FrameView> filter_frames(const StackFilter& f, FrameView frames, FrameTable& table) {
  if (f.kernel_only || f.user_only || (f.max_stack && frames.size() > f.max_stack)) {
    std::vector<uint32_t> kept;
    size_t real = 0;  // the stack's own frames kept so far
    for (size_t i = 0; i < frames.size(); ++i) {
      const Frame& frame = frames[i];
      if (frame.synthetic())
        kept.push_back(frames.ids()[i]);
      else if (!(frame.kernel() ? f.user_only : f.kernel_only) &&
               (f.max_stack == 0 || real++ < f.max_stack))
        kept.push_back(frames.ids()[i]);
    }
    if (kept.empty())
      return std::nullopt;
    if (kept.size() != frames.size())
      frames = FrameView(table.keep(std::move(kept)), &table);
  }
  if (!f.dsos.empty() && std::none_of(frames.begin(), frames.end(), [&](const Frame& fr) {
        return std::find(f.dsos.begin(), f.dsos.end(), fr.module) != f.dsos.end();
      }))
    return std::nullopt;
  if (f.symbol && std::none_of(frames.begin(), frames.end(), [&](const Frame& fr) {
        // libstdc++'s matcher recurses per character: a crafted
        // recording's megabyte-long name must not exhaust the stack.
        constexpr size_t kMaxMatched = 4096;
        return fr.named() &&
               std::regex_search(fr.name.begin(),
                                 fr.name.begin() + std::min(fr.name.size(), kMaxMatched),
                                 *f.symbol);
      }))
    return std::nullopt;
  return frames;
}

}  // namespace ebprof::report
