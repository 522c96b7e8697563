#include "report/write/folded_writer.h"

#include <map>
#include <string>

#include "report/write/frame_text.h"

namespace ebprof::report {
namespace {

// ';' separates frames and a newline ends the stack: keep both out of comms
// and names (spaces are fine: the count follows the last one).
void append_name(std::string& line, const std::string& name) {
  for (char c : name)
    line += (c == ';' || c == '\n') ? '_' : c;
}

// FlameGraph's annotations: what colours a frame in flamegraph.pl.
const char* annotation(const Frame& f) {
  switch (f.kind) {
    case FrameKind::kKernel:
      return "_[k]";
    case FrameKind::kInlined:
      return "_[i]";
    case FrameKind::kJit:
      return "_[j]";
    default:
      return "";
  }
}

}  // namespace

std::string folded_line(const std::string& comm, uint32_t pid, const FrameView& frames,
                        const FoldedOptions& options) {
  std::string line;
  if (options.comm)
    append_name(line, comm);
  if (options.pid) {
    if (options.comm)
      line += '-';
    line += std::to_string(pid);
  }
  bool in_user = !frames.empty() && !frames.back().kernel();
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (options.delimit && in_user && it->kernel()) {
      line += line.empty() ? "-" : ";-";
      in_user = false;
    }
    if (!line.empty())
      line += ';';
    append_name(line, frame_name(*it));
    if (options.annotate)
      line += annotation(*it);
  }
  return line.empty() ? "[no stack]" : line;
}

void write_folded(std::ostream& out, const Profile& profile, const FoldedOptions& options) {
  std::map<std::string, uint64_t> lines;
  for (const Stack& s : profile.stacks)
    lines[folded_line(profile.comm(s.key), s.key.stack.pid, s.frames, options)] += s.values.count;
  for (const auto& [line, count] : lines)
    out << line << ' ' << count << '\n';
}

}  // namespace ebprof::report
