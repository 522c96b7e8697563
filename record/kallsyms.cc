#include "record/kallsyms.h"

#include <algorithm>
#include <charconv>

#include "common/error.h"
#include "record/proc_file.h"

namespace ebprof::record {

std::vector<format::KernelSymbol> parse_kallsyms(std::string_view text) {
  std::vector<format::KernelSymbol> out;
  while (!text.empty()) {
    std::string_view line = take_line(text);

    // "ffffffff81000000 T _stext" or "... t name\t[module]"
    uint64_t address = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), address, 16);
    size_t pos = end - line.data();
    if (ec != std::errc() || pos + 3 > line.size() || line[pos] != ' ' || line[pos + 2] != ' ')
      continue;
    char type = line[pos + 1];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W')
      continue;
    std::string_view rest = line.substr(pos + 3);
    std::string_view module;
    if (size_t tab = rest.find('\t'); tab != std::string_view::npos) {
      module = rest.substr(tab + 1);
      rest = rest.substr(0, tab);
      if (module.size() >= 2 && module.front() == '[' && module.back() == ']')
        module = module.substr(1, module.size() - 2);
    }
    if (rest.empty())
      continue;
    out.push_back({address, std::string(rest), std::string(module)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.address < b.address; });
  return out;
}

bool kallsyms_hidden(const std::vector<format::KernelSymbol>& symbols) {
  return std::all_of(symbols.begin(), symbols.end(), [](const auto& s) { return s.address == 0; });
}

std::vector<format::KernelSymbol> read_kallsyms() {
  return parse_kallsyms(read_proc_file("/proc/kallsyms"));
}

}  // namespace ebprof::record
