#include "report/folded_writer.h"

#include <map>
#include <string>

namespace ebprof::report {
namespace {

// ';' separates frames and a newline ends the stack: keep both out of comms
// and names (spaces are fine: the count follows the last one).
void append_name(std::string& line, const std::string& name) {
  for (char c : name)
    line += (c == ';' || c == '\n') ? '_' : c;
}

}  // namespace

std::string folded_line(const std::string& comm, uint32_t pid, std::span<const Frame> frames,
                        const FoldedOptions& options) {
  std::string line;
  if (options.comm)
    append_name(line, comm);
  if (options.pid) {
    if (options.comm)
      line += '-';
    line += std::to_string(pid);
  }
  bool in_user = !frames.empty() && !frames.back().kernel;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (options.delimit && in_user && it->kernel) {
      line += line.empty() ? "-" : ";-";
      in_user = false;
    }
    if (!line.empty())
      line += ';';
    append_name(line, it->name);
    if (options.annotate && it->kernel)
      line += "_[k]";
    else if (options.annotate && it->inlined)
      line += "_[i]";
  }
  return line.empty() ? "[no stack]" : line;
}

void write_folded(std::ostream& out, const std::vector<SymbolizedStack>& stacks,
                  const FoldedOptions& options) {
  std::map<std::string, uint64_t> lines;
  for (const auto& s : stacks)
    lines[folded_line(s.comm, s.pid, s.frames, options)] += s.count;
  for (const auto& [line, count] : lines)
    out << line << ' ' << count << '\n';
}

}  // namespace ebprof::report
