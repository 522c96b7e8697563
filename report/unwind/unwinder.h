#pragma once

// The unwind stage: what the user half of a recorded stack is made of, by
// the unwinder of the recording's native frames: the frame-pointer chain
// the kernel walked when sampling, or the copy of the stack
// (--call-graph dwarf) walked now with the binaries' call frame
// information. The stack resolver (report/resolve) picks one per
// recording and names what it gives.

#include <cstdint>
#include <span>

#include "format/contents.h"
#include "report/load/id_runs.h"
#include "report/load/recording.h"
#include "report/model/frame.h"
#include "report/model/sample_key.h"

namespace ebprof::report {

// The native frames of one stack, leaf first: the sampled instruction,
// then return addresses. Valid as long as its unwinder and recording are.
struct UnwoundStack {
  std::span<const uint64_t> pcs;
  // kNone when the frames reach the outermost one; else why they stop
  // short, which the root frame of the stack then says.
  UnnamedReason end = UnnamedReason::kNone;
  uint32_t window_bytes = 0;  // with `end`: the size of the copy it ran out of, if that
  bool from_window = false;   // walked from a copy of the stack
  bool spliced = false;       // and continued on the recorded frame-pointer chain
  // The ref that stands for every ref unwinding alike: the one whose
  // frames are named, once for all of them.
  StackRef stands_for;
};

class Unwinder {
 public:
  virtual ~Unwinder() = default;

  // Whether it unwinds the native frames of recordings like `info`'s.
  virtual bool unwinds(const format::RecordingInfo& info) const = 0;

  // Turns each of `refs` (stacks of `recording`, their windows in
  // `windows`) into the ref that stands for it, as the file streams: refs
  // that unwind alike then count as one key, and their windows can be let
  // go.
  virtual void settle(const Recording& recording, const IdRuns<format::UserWindow>& windows,
                      std::span<StackRef> refs) = 0;

  // The native frames of `ref`, a stack of `recording`, settled or not.
  virtual UnwoundStack unwind(const Recording& recording, const StackRef& ref) = 0;
};

}  // namespace ebprof::report
