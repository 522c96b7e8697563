#include "report/folded_writer.h"

#include <map>
#include <string>

namespace ebprof::report {
namespace {

// ';' separates frames and the last space separates the count: keep both
// out of names (C++ names have spaces, which are fine before the count).
void append_frame(std::string& line, const std::string& name) {
  line += ';';
  for (char c : name)
    line += (c == ';' || c == '\n') ? '_' : c;
}

}  // namespace

void write_folded(std::ostream& out, const std::vector<SymbolizedStack>& stacks) {
  std::map<std::string, uint64_t> lines;
  for (const auto& s : stacks) {
    std::string line = s.comm;
    for (auto it = s.frames.rbegin(); it != s.frames.rend(); ++it)
      append_frame(line, it->name);
    lines[line] += s.count;
  }
  for (const auto& [line, count] : lines)
    out << line << ' ' << count << '\n';
}

}  // namespace ebprof::report
