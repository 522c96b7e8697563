#pragma once

// The resolve stage: a recorded stack (a StackRef) to the frames a report
// shows, in one place. Kernel frames are the kernel's own walk; native
// frames come from the unwinder the recording's native frames are for
// (the first registered that unwinds it), and where they stop short a root
// frame says why; the symbolizer names each frame by its kind. Adding a
// way to unwind is one Unwinder, registered here by report/run.

#include <memory>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "report/load/recording.h"
#include "report/model/facts.h"
#include "report/model/profile.h"
#include "report/symbolize/symbolizer.h"
#include "report/unwind/unwinder.h"

namespace ebprof::report {

class StackResolver {
 public:
  explicit StackResolver(Symbolizer& symbolizer) : symbolizer_(symbolizer) {}
  StackResolver(const StackResolver&) = delete;
  StackResolver& operator=(const StackResolver&) = delete;

  // Adds an unwinder, after those added before: a recording's native
  // frames are unwound by the first that unwinds it.
  void add(std::unique_ptr<Unwinder> unwinder);

  // What the load and the script's stream settle each batch's stacks with
  // (SettleStacks): refs that unwind alike become one, and the DWARF their
  // frames will be named from starts opening on other cores.
  void settle(const Recording& recording, const IdRuns<format::UserWindow>& windows,
              std::span<StackRef> refs);

  // The frames of `ref`, a stack of `recording`, settled or not: kernel
  // frames, then native frames, leaf first, with a root frame where they
  // stop short. Each distinct outcome is named once.
  FrameView stack(const Recording& recording, const StackRef& ref);

  // Starts opening what the frames of `ref` will be named from (stack()
  // opens whatever this missed): a report prepares every stack before
  // naming any.
  void prepare(const Recording& recording, const StackRef& ref);

  // How the samples of `recording` unwound from their windows.
  UnwindCounts count_unwinding(const Recording& recording);

  FrameTable& table() { return symbolizer_.table(); }
  const std::shared_ptr<FrameTable>& shared_table() const { return symbolizer_.shared_table(); }

 private:
  Unwinder& unwinder_for(const Recording& recording);
  std::vector<uint32_t> name(const Recording& recording, const StackRef& ref,
                             const UnwoundStack& native);
  // The native frames of a stack that ran CPython, with its Python frames
  // where they ran, into `ids`.
  void merge_python(const Recording& recording, const StackRef& ref, const format::Stack& stack,
                    std::span<const format::ProcessInfo> captures, const UnwoundStack& native,
                    std::vector<uint32_t>& ids);
  // The root frame of a stack whose Python walk stopped short, if it did.
  void end_python(const format::Stack& stack, std::vector<uint32_t>& ids);

  Symbolizer& symbolizer_;
  std::vector<std::unique_ptr<Unwinder>> unwinders_;
  std::vector<Unwinder*> chosen_;  // by Recording::index; null until asked
  // By the ref that stands for each outcome (UnwoundStack::stands_for).
  std::unordered_map<StackRef, FrameView, StackRefHash> named_;
  std::unordered_set<StackRef, StackRefHash> prepared_;
};

}  // namespace ebprof::report
