#include "record/jit_maps.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <string>

#include "format/lookup.h"
#include "record/proc_file.h"

namespace ebprof::record {
namespace {

bool take_hex(std::string_view& s, uint64_t& value) {
  if (s.starts_with("0x"))
    s.remove_prefix(2);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, 16);
  if (ec != std::errc() || end == s.data() + s.size() || *end != ' ')
    return false;
  s.remove_prefix(static_cast<size_t>(end - s.data()) + 1);
  return true;
}

}  // namespace

std::vector<ElfSymbol> parse_perf_map(std::string_view text) {
  std::vector<ElfSymbol> out;
  while (!text.empty()) {
    std::string_view line = take_line(text);
    ElfSymbol s;
    if (!take_hex(line, s.address) || !take_hex(line, s.size) || line.empty())
      continue;
    s.name = std::string(line);
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.address < b.address; });
  return out;
}

const ElfSymbol* JitMaps::find(uint32_t pid, uint32_t namespace_pid, uint64_t ip, uint64_t now_ns) {
  auto covering = [ip](const std::vector<ElfSymbol>& symbols) -> const ElfSymbol* {
    auto it = std::upper_bound(symbols.begin(), symbols.end(), ip,
                               [](uint64_t a, const ElfSymbol& s) { return a < s.address; });
    if (it == symbols.begin())
      return nullptr;
    --it;
    return ip - it->address < it->size ? &*it : nullptr;
  };
  Table& t = tables_[pid];
  if (const ElfSymbol* s = covering(t.symbols))
    return s;
  if (t.size >= 0 && now_ns < t.read_at_ns + kRereadIntervalNs)
    return nullptr;
  t.read_at_ns = now_ns;
  const std::string path = "/proc/" + std::to_string(pid) + "/root/tmp/perf-" +
                           std::to_string(namespace_pid ? namespace_pid : pid) + ".map";
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || st.st_size == t.size)
    return nullptr;
  std::string text;
  if (try_read_proc_file(path, text) != 0)
    return nullptr;
  t.size = st.st_size;
  t.symbols = parse_perf_map(text);
  return covering(t.symbols);
}

}  // namespace ebprof::record
