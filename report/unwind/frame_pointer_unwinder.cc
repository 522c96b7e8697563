#include "report/unwind/frame_pointer_unwinder.h"

namespace ebprof::report {

void FramePointerUnwinder::settle(const Recording&, const IdRuns<format::UserWindow>&,
                                  std::span<StackRef> refs) {
  for (StackRef& ref : refs)
    ref.window = kNoWindow;
}

UnwoundStack FramePointerUnwinder::unwind(const Recording& recording, const StackRef& ref) {
  UnwoundStack u;
  u.stands_for = ref;
  u.stands_for.window = kNoWindow;
  if (const format::Stack* stack = recording.stacks.find(ref.stack)) {
    u.pcs = stack->user;
    // A walk cut at the most frames a sample holds: the shares of the
    // outer frames would be silently wrong without a root that says so.
    if (u.pcs.size() >= format::kMaxStackFrames)
      u.end = UnnamedReason::kStackTruncated;
  }
  return u;
}

}  // namespace ebprof::report
