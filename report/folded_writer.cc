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

void write_folded(std::ostream& out, const std::vector<SymbolizedStack>& stacks,
                  const FoldedOptions& options) {
  std::map<std::string, uint64_t> lines;
  for (const auto& s : stacks) {
    std::string line;
    if (options.comm)
      append_name(line, s.comm);
    if (options.pid) {
      if (options.comm)
        line += '-';
      line += std::to_string(s.pid);
    }
    bool in_user = !s.frames.empty() && !s.frames.back().kernel;
    for (auto it = s.frames.rbegin(); it != s.frames.rend(); ++it) {
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
    if (line.empty())
      line = "[no stack]";
    lines[line] += s.count;
  }
  for (const auto& [line, count] : lines)
    out << line << ' ' << count << '\n';
}

}  // namespace ebprof::report
