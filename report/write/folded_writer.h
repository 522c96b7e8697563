#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "report/model/profile.h"

namespace ebprof::report {

struct FoldedOptions {
  bool comm = true;       // a first frame naming the command...
  bool pid = false;       // ...and/or the pid ("comm-pid" with both, as stackcollapse-perf --pid)
  bool annotate = false;  // kernel frames end in _[k], inlined _[i], JIT _[j], like bcc -a
  bool delimit = false;   // a "-" frame between the user and the kernel half, like bcc -d
};

// One stack's folded line, root first, without its count.
std::string folded_line(const std::string& comm, uint32_t pid, const FrameView& frames,
                        const FoldedOptions& options = {});

// Folded stacks as flamegraph.pl and speedscope read them: one line per
// distinct call chain, "comm;root;...;leaf COUNT", sorted.
void write_folded(std::ostream& out, const Profile& profile, const FoldedOptions& options = {});

}  // namespace ebprof::report
