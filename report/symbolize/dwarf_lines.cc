#include "report/symbolize/dwarf_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <sys/stat.h>

#include <algorithm>
#include <exception>
#include <initializer_list>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "common/dwarf_cfi.h"
#include "common/elf_file.h"
#include "report/symbolize/inflated_cache.h"
#include "report/symbolize/inflated_elf.h"

namespace ebprof::report {
namespace {

// libdw can open an ELF file with no DWARF units (only .debug_frame, say),
// which has nothing to say about functions or lines.
bool has_units(Dwarf* dwarf) {
  Dwarf_Off next = 0;
  size_t header_size = 0;
  return dwarf_nextcu(dwarf, 0, &next, &header_size, nullptr, nullptr, nullptr) == 0;
}

// The build-id the cache knows `path`'s inflated copy by; "" for none.
std::string build_id_of(const std::string& path) {
  try {
    return read_elf_identity(path).build_id;
  } catch (const std::exception&) {
    return "";  // libdw decides what the file is
  }
}

bool is_function(int tag) {
  return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point;
}

// Whether functions with code can be found inside a DIE of this tag: the
// scopes libdw's own walks descend into. Variables, parameters and types
// hold none, and are most of a unit.
bool may_hold_functions(int tag) {
  switch (tag) {
    case DW_TAG_compile_unit:
    case DW_TAG_partial_unit:
    case DW_TAG_module:
    case DW_TAG_lexical_block:
    case DW_TAG_with_stmt:
    case DW_TAG_catch_block:
    case DW_TAG_try_block:
    case DW_TAG_entry_point:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_subprogram:
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
      return true;
    default:
      return false;
  }
}

// Inlined instances and out-of-line copies keep their names behind
// DW_AT_abstract_origin, member definitions behind DW_AT_specification:
// dwarf_attr_integrate follows both.
std::string function_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (unsigned name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name}) {
    if (const char* s = dwarf_formstring(dwarf_attr_integrate(die, name, &attr)))
      return s;
  }
  return "";
}

// Where `inlined` (an inlined instance) was called from, in the function
// containing it. The file index is into the file table of its own unit.
SourceFrame call_site(Dwarf_Die* inlined) {
  SourceFrame frame;
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  Dwarf_Die cu;
  Dwarf_Files* files = nullptr;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &value) == 0 &&
      dwarf_diecu(inlined, &cu, nullptr, nullptr) && dwarf_getsrcfiles(&cu, &files, nullptr) == 0) {
    if (const char* file = dwarf_filesrc(files, value, nullptr, nullptr))
      frame.file = file;
  }
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &value) == 0)
    frame.line = static_cast<int>(value);
  return frame;
}

// The CU holding `address`: by .debug_aranges, which libdw indexes, else
// by each CU's own ranges, since clang emits no aranges unless asked
// (-gdwarf-aranges).
Dwarf_Die* cu_of(Dwfl_Module* module, Dwarf_Addr address, Dwarf_Addr* bias) {
  if (Dwarf_Die* cu = dwfl_module_addrdie(module, address, bias))
    return cu;
  for (Dwarf_Die* cu = dwfl_module_nextcu(module, nullptr, bias); cu;
       cu = dwfl_module_nextcu(module, cu, bias))
    if (dwarf_haspc(cu, address - *bias) > 0)
      return cu;
  return nullptr;
}

// Functions with code, each with the function it is nested in, and the
// addresses they cover cut into segments, each the innermost function's
// there. dwarf_getscopes walks a unit's whole tree at every lookup: on a
// unit the size of CPython's ceval.c, that was most of a report's time.
struct FunctionIndex {
  struct Function {
    Dwarf_Die die;
    int32_t parent;  // index of the function it is nested in; -1 for none
  };
  struct Segment {
    Dwarf_Addr start, end;
    uint32_t function;
  };
  std::vector<Function> functions;
  std::vector<Segment> segments;  // ascending, disjoint

  // The innermost function holding `address`, if any.
  const Function* innermost(Dwarf_Addr address) const {
    auto it = std::upper_bound(segments.begin(), segments.end(), address,
                               [](Dwarf_Addr a, const Segment& s) { return a < s.start; });
    if (it == segments.begin() || address >= (--it)->end)
      return nullptr;
    return &functions[it->function];
  }
  const Function* parent(const Function& f) const {
    return f.parent < 0 ? nullptr : &functions[static_cast<size_t>(f.parent)];
  }
};

// A unit's outermost functions, their insides left for when an address
// falls in them (most of a unit is never sampled); or one function and
// everything inside it.
enum class Walk : uint8_t { kOutermost, kInside };

struct FunctionRange {
  Dwarf_Addr start, end;
  uint32_t depth, function;
};

// Cuts the ranges, which nest, into segments each owned by the innermost
// function there; ranges that overlap without nesting (bad DWARF) cost
// nothing but their own accuracy.
std::vector<FunctionIndex::Segment> segments_of(std::vector<FunctionRange>& ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const FunctionRange& a, const FunctionRange& b) {
    return std::tie(a.start, a.depth) < std::tie(b.start, b.depth);
  });
  std::vector<FunctionIndex::Segment> segments;
  std::vector<const FunctionRange*> open;  // each nested in the one before
  Dwarf_Addr at = 0;
  auto until = [&](Dwarf_Addr end, uint32_t function) {
    if (end > at) {
      segments.push_back({at, end, function});
      at = end;
    }
  };
  for (const FunctionRange& r : ranges) {
    while (!open.empty() && open.back()->end <= r.start) {
      until(open.back()->end, open.back()->function);
      open.pop_back();
    }
    if (!open.empty())
      until(r.start, open.back()->function);
    at = std::max(at, r.start);
    open.push_back(&r);
  }
  for (; !open.empty(); open.pop_back())
    until(open.back()->end, open.back()->function);
  return segments;
}

// The functions `walk` asks for under `root` (a unit, or a function).
// Imported (partial) units are walked where they are imported, as
// dwarf_getscopes does, each once: a unit that imports itself, or two
// that import each other, would otherwise double the walk at every level.
// DWARF nested past any sane depth is not followed.
FunctionIndex index_functions(Dwarf_Die root, Walk walk) {
  constexpr uint32_t kMaxDepth = 512;
  struct Pending {
    Dwarf_Die die;
    int32_t parent;
    uint32_t depth;
  };
  FunctionIndex out;
  std::vector<FunctionRange> ranges;
  std::vector<Pending> stack;
  std::unordered_set<const void*> imported;  // by where the unit's DIE is: a supplementary
                                             // file's offsets are not the main file's
  auto push_children = [&](Dwarf_Die* die, int32_t parent, uint32_t depth) {
    Dwarf_Die child;
    if (depth < kMaxDepth && dwarf_child(die, &child) == 0) {
      do
        stack.push_back({child, parent, depth});
      while (dwarf_siblingof(&child, &child) == 0);
    }
  };
  if (walk == Walk::kOutermost)
    push_children(&root, -1, 1);
  else
    stack.push_back({root, -1, 0});
  while (!stack.empty()) {
    Pending p = stack.back();
    stack.pop_back();
    const int tag = dwarf_tag(&p.die);
    if (tag == DW_TAG_imported_unit) {
      Dwarf_Attribute attr;
      Dwarf_Die unit;
      if (dwarf_formref_die(dwarf_attr(&p.die, DW_AT_import, &attr), &unit) &&
          imported.insert(unit.addr).second)
        push_children(&unit, p.parent, p.depth + 1);
      continue;
    }
    int32_t inner = p.parent;
    if (is_function(tag)) {
      const auto index = static_cast<uint32_t>(out.functions.size());
      Dwarf_Addr base = 0, start = 0, end = 0;
      bool has_code = false;
      for (ptrdiff_t at = 0; (at = dwarf_ranges(&p.die, at, &base, &start, &end)) > 0;) {
        if (end > start) {
          ranges.push_back({start, end, p.depth, index});
          has_code = true;
        }
      }
      if (has_code)
        out.functions.push_back({p.die, p.parent});
      // No code inside a function without any; an outermost one's insides
      // wait for an address in it.
      if (!has_code || walk == Walk::kOutermost)
        continue;
      inner = static_cast<int32_t>(index);
    }
    if (may_hold_functions(tag))
      push_children(&p.die, inner, p.depth + 1);
  }
  out.segments = segments_of(ranges);
  return out;
}

}  // namespace

struct DwarfLines::Functions {
  struct Unit {
    FunctionIndex outermost;
    std::vector<std::unique_ptr<FunctionIndex>> inside;  // by outermost function, on first use
  };
  std::unordered_map<Dwarf_Off, Unit> units;  // by the unit DIE's offset

  // The innermost function at `address` of `unit`, and the index it and
  // the functions around it are in.
  const FunctionIndex::Function* innermost(Dwarf_Die* unit, Dwarf_Addr address,
                                           const FunctionIndex*& index) {
    auto [it, added] = units.try_emplace(dwarf_dieoffset(unit));
    Unit& u = it->second;
    if (added) {
      u.outermost = index_functions(*unit, Walk::kOutermost);
      u.inside.resize(u.outermost.functions.size());
    }
    const FunctionIndex::Function* outer = u.outermost.innermost(address);
    if (!outer)
      return nullptr;
    std::unique_ptr<FunctionIndex>& inside = u.inside[outer - u.outermost.functions.data()];
    if (!inside)
      inside = std::make_unique<FunctionIndex>(index_functions(outer->die, Walk::kInside));
    index = inside.get();
    return inside->innermost(address);
  }
};

void DwarfLines::DwflEnd::operator()(Dwfl* dwfl) const {
  dwfl_end(dwfl);
}

DwarfLines::DwarfLines(std::unique_ptr<ElfImage> image, DwflHandle dwfl, Dwfl_Module* module,
                       uint64_t bias)
    : image_(std::move(image)),
      dwfl_(std::move(dwfl)),
      module_(module),
      bias_(bias),
      functions_(std::make_unique<Functions>()) {}

DwarfLines::DwarfLines(DwarfLines&&) noexcept = default;
DwarfLines& DwarfLines::operator=(DwarfLines&&) noexcept = default;
DwarfLines::~DwarfLines() = default;

std::optional<DwarfLines> DwarfLines::open(const std::string& path, const InflatedCache& cache) {
  // libdwfl opens the file itself, without O_NONBLOCK: refuse FIFOs and
  // devices first, which a recorded path may name.
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return std::nullopt;
  DwflHandle dwfl(dwfl_begin(&offline_callbacks()));
  if (!dwfl)
    return std::nullopt;
  // dwfl_report_elf at base 0, adding p_vaddr, puts module addresses on
  // ELF virtual addresses for ET_DYN and ET_EXEC. An inflated copy can
  // only be reported offline, which places an ET_DYN file at libdwfl's
  // offline base: the bias below undoes that.
  dwfl_report_begin(dwfl.get());
  std::unique_ptr<ElfImage> image;
  Dwfl_Module* module = nullptr;
  const std::string build_id = cache.dir.empty() ? "" : build_id_of(path);
  if (UniqueFd cached = find_inflated(cache, build_id)) {
    // libdwfl takes the descriptor.
    module = dwfl_report_elf(dwfl.get(), path.c_str(), path.c_str(), cached.release(), 0, true);
  } else {
    image = std::make_unique<ElfImage>(inflated_elf(path));
    if (*image) {
      keep_inflated(cache, build_id, {image->data(), image->size()});
      module = dwfl_report_offline_memory(dwfl.get(), path.c_str(), path.c_str(), image->data(),
                                          image->size());
    } else {
      module = dwfl_report_elf(dwfl.get(), path.c_str(), path.c_str(), -1, 0, true);
    }
  }
  if (!module || dwfl_report_end(dwfl.get(), nullptr, nullptr) != 0)
    return std::nullopt;
  // Relocatable objects (.o, kernel modules) have no virtual addresses to
  // look up: libdwfl would lay their sections out at addresses of its own.
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module, &bias);
  GElf_Ehdr ehdr;
  if (!elf || !gelf_getehdr(elf, &ehdr) || (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN))
    return std::nullopt;
  Dwarf_Addr dwarf_bias = 0;
  Dwarf* dwarf = dwfl_module_getdwarf(module, &dwarf_bias);
  if (!dwarf || !has_units(dwarf))
    return std::nullopt;
  return DwarfLines(std::move(image), std::move(dwfl), module, bias);
}

std::vector<SourceFrame> DwarfLines::frames(uint64_t vaddr) {
  if (!dwfl_)
    return {};
  // Zero in practice (see open()), but the bias is what libdwfl defines as
  // module address minus file address, so apply it rather than assume it.
  const Dwarf_Addr address = vaddr + bias_;
  Dwarf_Addr cu_bias = 0;
  Dwarf_Die* cu = cu_of(module_, address, &cu_bias);
  if (!cu)
    return {};

  SourceFrame innermost;
  if (Dwarf_Line* row = dwarf_getsrc_die(cu, address - cu_bias)) {
    if (const char* file = dwarf_linesrc(row, nullptr, nullptr))
      innermost.file = file;
    dwarf_lineno(row, &innermost.line);
  }
  const bool has_row = !innermost.file.empty();

  // The innermost function, then the ones it is nested in, out to the
  // first that was not inlined.
  const FunctionIndex* index = nullptr;
  std::vector<SourceFrame> out;
  SourceFrame frame = innermost;
  for (const FunctionIndex::Function* f = functions_->innermost(cu, address - cu_bias, index); f;
       f = index->parent(*f)) {
    Dwarf_Die die = f->die;
    frame.function = function_name(&die);
    if (dwarf_tag(&die) != DW_TAG_inlined_subroutine) {
      out.push_back(std::move(frame));
      return out;
    }
    frame.inlined = true;
    out.push_back(std::move(frame));
    frame = call_site(&die);
  }
  // No out-of-line function around the address: a line-table row outside
  // any function, or malformed nesting. Keep what the DWARF did say.
  if (out.empty() && has_row)
    out.push_back(innermost);
  return out;
}

}  // namespace ebprof::report
