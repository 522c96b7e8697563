#pragma once

#include "report/unwind/unwinder.h"

namespace ebprof::report {

// The frame-pointer walk the kernel made when sampling (bpf_get_stack),
// as recorded with every sample: the native frames of a recording without
// copies of the stack, of one read with --unwind fp, and of the samples
// that carry no copy.
class FramePointerUnwinder final : public Unwinder {
 public:
  bool unwinds(const format::RecordingInfo&) const override { return true; }
  // Stacks are what they are: windows are left out.
  void settle(const Recording& recording, const IdRuns<format::UserWindow>& windows,
              std::span<StackRef> refs) override;
  UnwoundStack unwind(const Recording& recording, const StackRef& ref) override;
};

}  // namespace ebprof::report
