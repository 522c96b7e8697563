#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "report/model/profile.h"

namespace ebprof::report {

// What to keep of each stack: a half of it, the stacks through a shared
// object or a function (like pprof's focus).
struct StackFilter {
  bool kernel_only = false;
  bool user_only = false;
  std::vector<std::string> dsos;     // module names as the report shows them (libc.so.6)
  std::optional<std::regex> symbol;  // keep stacks with a named frame whose name matches
  size_t max_stack = 0;              // the most frames kept, from the leaf (0: all), like perf's

  bool keeps_everything() const {
    return !kernel_only && !user_only && dsos.empty() && !symbol && max_stack == 0;
  }
};

// The frames of `frames` that `filter` keeps, or nullopt when it drops the
// stack: the frames of the other half go (frames a report adds, such as
// the off-CPU state, belong to both), and so does a stack left empty, or
// without a matching frame; past max_stack frames from the leaf, the rest
// goes (the frames a report adds stay). A new list is kept in `table`.
std::optional<FrameView> filter_frames(const StackFilter& filter, FrameView frames,
                                       FrameTable& table);

}  // namespace ebprof::report
