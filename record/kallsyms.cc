#include "record/kallsyms.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "common/error.h"
#include "format/lookup.h"
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

void bound_kernel_symbols(std::vector<format::KernelSymbol>& symbols,
                          const std::vector<format::KernelModule>& modules) {
  uint64_t etext = 0;
  for (const auto& s : symbols)
    if (s.module.empty() && s.name == "_etext")
      etext = s.address;
  for (size_t i = 0; i < symbols.size(); ++i) {
    auto& s = symbols[i];
    uint64_t end = s.address + kMaxUnboundedSymbol;
    if (s.module.empty() && s.address < etext) {
      end = etext;
    } else {
      for (const auto& m : modules)
        if (m.name == s.module && s.address >= m.start && s.address < m.end)
          end = m.end;
    }
    if (i + 1 < symbols.size() && symbols[i + 1].address > s.address)
      end = std::min(end, symbols[i + 1].address);
    s.size = end > s.address ? end - s.address : 0;
  }
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

bool kallsyms_hidden(const std::vector<format::KernelSymbol>& symbols) {
  return std::all_of(symbols.begin(), symbols.end(), [](const auto& s) { return s.address == 0; });
}

std::vector<format::KernelSymbol> read_kallsyms(const std::vector<format::KernelModule>& modules) {
  std::vector<format::KernelSymbol> symbols = parse_kallsyms(read_proc_file("/proc/kallsyms"));
  bound_kernel_symbols(symbols, modules);
  return symbols;
}

KernelSymbolIndex::KernelSymbolIndex(std::vector<format::KernelSymbol> symbols)
    : symbols_(std::move(symbols)), taken_(symbols_.size()) {}

const format::KernelSymbol* KernelSymbolIndex::find(std::string_view name) const {
  auto it = std::find_if(symbols_.begin(), symbols_.end(),
                         [&](const format::KernelSymbol& s) { return s.name == name; });
  return it == symbols_.end() ? nullptr : &*it;
}

std::span<const uint64_t> KernelSymbolIndex::from(std::span<const uint64_t> stack,
                                                  const format::KernelSymbol* function) {
  if (function)
    for (size_t frame = 0; frame < stack.size(); ++frame)
      if (format::covers(*function, format::lookup_address(stack, frame)))
        return stack.subspan(frame);
  return stack;
}

void KernelSymbolIndex::take_new(std::span<const uint64_t> stack,
                                 std::vector<format::KernelSymbol>& out) {
  for (size_t frame = 0; frame < stack.size(); ++frame) {
    uint64_t address = format::lookup_address(stack, frame);
    const format::KernelSymbol* symbol = format::kernel_symbol_at_or_below(symbols_, address);
    if (!symbol || !format::covers(*symbol, address))
      continue;
    size_t i = static_cast<size_t>(symbol - symbols_.data());
    if (!taken_[i]) {
      taken_[i] = true;
      out.push_back(*symbol);
    }
  }
}

}  // namespace ebprof::record
