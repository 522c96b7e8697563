#include "record/kallsyms.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "common/error.h"
#include "format/lookup.h"
#include "record/proc_file.h"

namespace ebprof::record {

std::vector<format::KernelModule> parse_proc_modules(std::string_view text) {
  // "ext4 1024000 2 jbd2,mbcache, Live 0xffffffffc0a00000"
  std::vector<format::KernelModule> out;
  while (!text.empty()) {
    std::string_view line = take_line(text);
    std::vector<std::string_view> fields;
    while (!line.empty()) {
      size_t start = line.find_first_not_of(' ');
      if (start == std::string_view::npos)
        break;
      line.remove_prefix(start);
      size_t end = std::min(line.find(' '), line.size());
      fields.push_back(line.substr(0, end));
      line.remove_prefix(end);
    }
    if (fields.size() < 6 || !fields[5].starts_with("0x"))
      continue;
    uint64_t size = 0, start = 0;
    std::string_view address = fields[5].substr(2);
    if (std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), size).ec !=
            std::errc() ||
        std::from_chars(address.data(), address.data() + address.size(), start, 16).ec !=
            std::errc())
      continue;
    // kptr_restrict shows address 0: the name stays, the range is unknown.
    out.push_back({std::string(fields[0]), start, start ? start + size : 0});
  }
  return out;
}

std::string parse_build_id_note(std::string_view notes) {
  constexpr uint32_t kGnuBuildId = 3;  // NT_GNU_BUILD_ID
  auto align4 = [](size_t n) { return (n + 3) & ~size_t{3}; };
  while (notes.size() >= 12) {
    uint32_t name_size, desc_size, type;
    std::memcpy(&name_size, notes.data(), 4);
    std::memcpy(&desc_size, notes.data() + 4, 4);
    std::memcpy(&type, notes.data() + 8, 4);
    notes.remove_prefix(12);
    const size_t name_bytes = align4(name_size), desc_bytes = align4(desc_size);
    if (name_bytes > notes.size() || desc_bytes > notes.size() - name_bytes)
      return {};
    if (type == kGnuBuildId && notes.substr(0, name_size) == std::string_view("GNU\0", 4) &&
        desc_size <= format::kMaxBuildId)
      return std::string(notes.substr(name_bytes, desc_size));
    notes.remove_prefix(name_bytes + desc_bytes);
  }
  return {};
}

KernelIdentity read_kernel_identity() {
  KernelIdentity k;
  std::string text;
  if (try_read_proc_file("/sys/kernel/notes", text) == 0)
    k.build_id = parse_build_id_note(text);
  if (try_read_proc_file("/proc/modules", text) == 0)
    k.modules = parse_proc_modules(text);
  for (format::KernelModule& m : k.modules)
    if (try_read_proc_file("/sys/module/" + m.name + "/notes/.note.gnu.build-id", text) == 0)
      m.build_id = parse_build_id_note(text);
  return k;
}

KernelSymbolIndex::KernelSymbolIndex(std::string_view text,
                                     std::span<const format::KernelModule> modules) {
  while (!text.empty())
    add(take_line(text));
  finish(modules);
}

KernelSymbolIndex KernelSymbolIndex::read(std::span<const format::KernelModule> modules) {
  KernelSymbolIndex index;
  read_proc_lines("/proc/kallsyms", [&](std::string_view line) { index.add(line); });
  index.finish(modules);
  return index;
}

void KernelSymbolIndex::add(std::string_view line) {
  // "ffffffff81000000 T _stext" or "... t name\t[module]"
  uint64_t address = 0;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), address, 16);
  size_t pos = end - line.data();
  if (ec != std::errc() || pos + 3 > line.size() || line[pos] != ' ' || line[pos + 2] != ' ')
    return;
  char type = line[pos + 1];
  if (type != 't' && type != 'T' && type != 'w' && type != 'W')
    return;
  std::string_view rest = line.substr(pos + 3);
  std::string_view module;
  if (size_t tab = rest.find('\t'); tab != std::string_view::npos) {
    module = rest.substr(tab + 1);
    rest = rest.substr(0, tab);
    if (module.size() >= 2 && module.front() == '[' && module.back() == ']')
      module = module.substr(1, module.size() - 2);
  }
  if (rest.empty() || rest.size() >= kNameChunk)
    return;
  if (names_.empty() || names_.back().size() + rest.size() > kNameChunk) {
    if (names_.size() > UINT16_MAX)
      return;
    names_.emplace_back().reserve(kNameChunk);
  }
  // Lines come grouped by module: the last one is nearly always it.
  size_t m = modules_.size() - 1;
  if (modules_[m] != module)
    m = static_cast<size_t>(std::find(modules_.begin(), modules_.end(), module) - modules_.begin());
  if (m == modules_.size()) {
    if (m > UINT16_MAX)
      return;
    modules_.emplace_back(module);
  }
  const auto at = static_cast<uint32_t>((names_.size() - 1) << 16 | names_.back().size());
  entries_.push_back(
      {address, 0, at, static_cast<uint16_t>(rest.size()), static_cast<uint16_t>(m)});
  names_.back().append(rest);
}

void KernelSymbolIndex::finish(std::span<const format::KernelModule> modules) {
  // The kernel lists them in order: sorting would cost a copy.
  auto by_address = [](const Entry& a, const Entry& b) { return a.address < b.address; };
  if (!std::is_sorted(entries_.begin(), entries_.end(), by_address))
    std::stable_sort(entries_.begin(), entries_.end(), by_address);
  bound(modules);
  taken_.assign(entries_.size(), false);
}

void KernelSymbolIndex::bound(std::span<const format::KernelModule> modules) {
  uint64_t etext = 0;
  for (const Entry& e : entries_)
    if (e.module == 0 && name(e) == "_etext")
      etext = e.address;
  // Each module's range, by index in modules_; none for pseudo-modules.
  std::vector<std::pair<uint64_t, uint64_t>> ranges(modules_.size());
  for (const format::KernelModule& m : modules)
    for (size_t i = 1; i < modules_.size(); ++i)
      if (modules_[i] == m.name)
        ranges[i] = {m.start, m.end};
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    uint64_t end = e.address + kMaxUnboundedSymbol;
    if (e.module == 0 && e.address < etext)
      end = etext;
    else if (auto [start, stop] = ranges[e.module]; e.address >= start && e.address < stop)
      end = stop;
    if (i + 1 < entries_.size() && entries_[i + 1].address > e.address)
      end = std::min(end, entries_[i + 1].address);
    e.size = end > e.address
                 ? static_cast<uint32_t>(std::min<uint64_t>(end - e.address, UINT32_MAX))
                 : 0;
  }
}

format::KernelSymbol KernelSymbolIndex::symbol(size_t i) const {
  const Entry& e = entries_[i];
  return {e.address, std::string(name(e)), modules_[e.module], e.size};
}

bool KernelSymbolIndex::hidden() const {
  return std::all_of(entries_.begin(), entries_.end(),
                     [](const Entry& e) { return e.address == 0; });
}

std::optional<format::KernelSymbol> KernelSymbolIndex::find(std::string_view wanted) const {
  for (size_t i = 0; i < entries_.size(); ++i)
    if (name(entries_[i]) == wanted)
      return symbol(i);
  return std::nullopt;
}

std::span<const uint64_t> KernelSymbolIndex::from(
    std::span<const uint64_t> stack, const std::optional<format::KernelSymbol>& function) {
  if (function)
    for (size_t frame = 0; frame < stack.size(); ++frame)
      if (format::covers(*function, format::lookup_address(stack, frame)))
        return stack.subspan(frame);
  return stack;
}

void KernelSymbolIndex::take_new(std::span<const uint64_t> stack,
                                 std::vector<format::KernelSymbol>& out) {
  for (size_t frame = 0; frame < stack.size(); ++frame) {
    const uint64_t address = format::lookup_address(stack, frame);
    auto it = std::upper_bound(entries_.begin(), entries_.end(), address,
                               [](uint64_t a, const Entry& e) { return a < e.address; });
    if (it == entries_.begin())
      continue;
    const size_t i = static_cast<size_t>(std::prev(it) - entries_.begin());
    if (address - entries_[i].address >= entries_[i].size || taken_[i])
      continue;
    taken_[i] = true;
    out.push_back(symbol(i));
  }
}

}  // namespace ebprof::record
