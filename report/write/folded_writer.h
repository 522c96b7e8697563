#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "report/model/profile.h"

namespace ebprof::report {

struct FoldedOptions {
  bool comm = true;       // a first frame naming the command...
  bool pid = false;       // ...and/or the pid ("comm-pid" with both, as stackcollapse-perf --pid)
  bool annotate = false;  // kernel frames end in _[k], inlined _[i], JIT _[j], like bcc -a
  bool delimit = false;   // a "-" frame between the user and the kernel half, like bcc -d
};

// Folded lines ("comm;root;...;leaf"), each distinct one once, in the order
// their text sorts. A line is held as the ids of its elements' text, each
// text made once: a profile of 300k distinct stacks of 26 frames held 230
// MB of line strings, and sorted them by comparing whole strings.
class FoldedLines {
 public:
  explicit FoldedLines(FoldedOptions options) : options_(options) {}

  // The index of the line of this stack (the same for equal lines).
  size_t add(const std::string& comm, uint32_t pid, const FrameView& frames);
  size_t size() const { return lines_.size(); }
  // Line indexes in the order of their text.
  std::vector<size_t> sorted() const;
  // Writes line `index`'s text.
  void write(std::ostream& out, size_t index) const;

 private:
  using Line = std::vector<uint32_t>;  // text ids, root first
  struct LineHash {
    size_t operator()(const Line& line) const;
  };
  uint32_t text(std::string s);
  bool less(const Line& a, const Line& b) const;

  FoldedOptions options_;
  std::vector<std::string> texts_;
  std::unordered_map<std::string, uint32_t> text_ids_;
  std::unordered_map<const Frame*, uint32_t> frame_texts_;  // frames are the table's: stable
  std::vector<Line> lines_;
  std::unordered_map<Line, size_t, LineHash> index_;
};

// Folded stacks as flamegraph.pl and speedscope read them: one line per
// distinct call chain, "comm;root;...;leaf COUNT", sorted.
void write_folded(std::ostream& out, const Profile& profile, const FoldedOptions& options = {});

}  // namespace ebprof::report
