// DwarfLines against the fixture tests/workloads/inlined.cc, built as a PIE
// and as a fixed-address executable, and against eu-addr2line as the oracle.
#include "report/symbolize/dwarf_lines.h"

#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "common/elf_file.h"
#include "common/text.h"
#include "report/symbolize/dwarf_files.h"
#include "report/symbolize/inflated_cache.h"
#include "report/symbolize/inflated_elf.h"

namespace ebprof::report {
namespace {

namespace fs = std::filesystem;

const std::string kSource = EBPROF_INLINED_SRC;
const std::string kPie = EBPROF_INLINED_PIE;
const std::string kNoPie = EBPROF_INLINED_NOPIE;
const std::string kObject = EBPROF_INLINED_OBJ;

const std::string kInner = "_ZN7fixture5innerEm";
const std::string kOuter = "_ZN7fixture5outerEm";
const std::string kContaining = "_ZN7fixture10containingEm";
const std::string kTwiceLong = "_ZN7fixture5twiceIlEET_S1_";
const std::string kScaledLong = "_ZN7fixture6scaledIlEET_S1_";

// The line of the fixture carrying `// <marker>`, so that editing the fixture
// does not silently shift what the tests expect.
int marker_line(const std::string& marker) {
  std::ifstream in(kSource);
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.find("// " + marker) != std::string::npos)
      return line;
  }
  ADD_FAILURE() << marker << " not found in " << kSource;
  return -1;
}

// e_type from the ELF header (little-endian: the fixtures are native).
int elf_type(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char header[18] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  return header[16] | header[17] << 8;
}

std::string base_name(const std::string& path) {
  return fs::path(path).filename().string();
}

std::string find_tool(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (fs::path(dir) / name).string();
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return "";
}

struct Outcome {
  int status = -1;  // the exit status; -1 when it could not run or was killed
  std::string out;
};

Outcome run(const std::string& command) {
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe)
    return outcome;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    outcome.out.append(buffer, n);
  int status = pclose(pipe);
  if (status != -1 && WIFEXITED(status))
    outcome.status = WEXITSTATUS(status);
  return outcome;
}

std::string temp_path(const std::string& name) {
  return (fs::path(testing::TempDir()) / name).string();
}

std::string shell_quoted(const std::string& s) {
  return "'" + s + "'";
}

// "file:line" or "file:line:column" as eu-addr2line prints it; "??:0" when
// it knows no line.
SourceFrame parse_location(const std::string& text) {
  SourceFrame frame;
  if (text == "??:0")
    return frame;
  auto numeric = [](const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  size_t last = text.rfind(':');
  size_t before =
      last == std::string::npos || last == 0 ? std::string::npos : text.rfind(':', last - 1);
  if (before != std::string::npos && numeric(text.substr(before + 1, last - before - 1))) {
    frame.file = text.substr(0, before);
    frame.line = std::stoi(text.substr(before + 1, last - before - 1));
  } else if (last != std::string::npos && numeric(text.substr(last + 1))) {
    frame.file = text.substr(0, last);
    frame.line = std::stoi(text.substr(last + 1));
  }
  return frame;
}

// `eu-addr2line -a -f -i` on `addresses` of `path`, many per run: per
// address, a function then its location for each inline level. The first
// function line reads "inner inlined at ... in caller": only its first name
// is the innermost function.
std::map<uint64_t, std::vector<SourceFrame>> addr2line(const std::string& tool,
                                                       const std::string& path,
                                                       const std::vector<uint64_t>& addresses) {
  std::map<uint64_t, std::vector<SourceFrame>> result;
  constexpr size_t kBatch = 64;
  for (size_t begin = 0; begin < addresses.size(); begin += kBatch) {
    std::string command = shell_quoted(tool) + " -a -f -i -e " + shell_quoted(path);
    for (size_t i = begin; i < std::min(addresses.size(), begin + kBatch); ++i) {
      std::ostringstream hex;
      hex << " 0x" << std::hex << addresses[i];
      command += hex.str();
    }
    // Its exit status is that of the last address alone (1 when it has no
    // DWARF): only a crash counts as a failure.
    Outcome outcome = run(command + " 2>/dev/null");
    if (outcome.status < 0) {
      ADD_FAILURE() << "failed: " << command;
      return result;
    }
    std::istringstream lines(outcome.out);
    std::vector<SourceFrame>* frames = nullptr;
    std::string function;
    bool want_function = true;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("0x", 0) == 0) {
        frames = &result[std::stoull(line, nullptr, 16)];
        want_function = true;
      } else if (!frames) {
        ADD_FAILURE() << "unexpected eu-addr2line output: " << line;
        return result;
      } else if (want_function) {
        function = line.substr(0, line.find(" inlined at "));
        want_function = false;
      } else {
        SourceFrame frame = parse_location(line);
        frame.function = function;
        frames->push_back(frame);
        want_function = true;
      }
    }
  }
  return result;
}

const ElfSymbol* symbol_named(const ElfSymbolTable& table, const std::string& name) {
  for (const ElfSymbol& s : table.symbols()) {
    if (s.name == name)
      return &s;
  }
  return nullptr;
}

// The first address of function `name` where the innermost frame is
// `innermost` at `line`, and the frames there.
std::vector<SourceFrame> frames_where(DwarfLines& dwarf, const ElfSymbolTable& table,
                                      const std::string& name, const std::string& innermost,
                                      int line) {
  const ElfSymbol* sym = symbol_named(table, name);
  if (!sym) {
    ADD_FAILURE() << name << " is not in the symbol table";
    return {};
  }
  for (uint64_t a = sym->address; a < sym->address + sym->size; ++a) {
    std::vector<SourceFrame> frames = dwarf.frames(a);
    if (!frames.empty() && frames[0].function == innermost && frames[0].line == line)
      return frames;
  }
  ADD_FAILURE() << "no address of " << name << " is in " << innermost << " at line " << line;
  return {};
}

TEST(DwarfLines, FixturesArePieAndFixedAddress) {
  // What makes the tests below cover both address schemes.
  EXPECT_EQ(elf_type(kPie), 3) << "ET_DYN";
  EXPECT_EQ(elf_type(kNoPie), 2) << "ET_EXEC";
}

TEST(DwarfLines, DoublyInlinedFunctionGivesThreeFrames) {
  const int inner = marker_line("LINE-INNER");
  const int outer = marker_line("LINE-OUTER");
  const int caller = marker_line("LINE-CALLER");
  for (const std::string& path : {kPie, kNoPie}) {
    SCOPED_TRACE(path);
    std::optional<DwarfLines> dwarf = DwarfLines::open(path);
    ASSERT_TRUE(dwarf);
    ElfSymbolTable table = ElfSymbolTable::load(path);
    std::vector<SourceFrame> frames = frames_where(*dwarf, table, kContaining, kInner, inner);
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].function, kInner);
    EXPECT_EQ(frames[0].line, inner);
    EXPECT_TRUE(frames[0].inlined);
    EXPECT_EQ(frames[1].function, kOuter);
    EXPECT_EQ(frames[1].line, outer);
    EXPECT_TRUE(frames[1].inlined);
    EXPECT_EQ(frames[2].function, kContaining);
    EXPECT_EQ(frames[2].line, caller);
    EXPECT_FALSE(frames[2].inlined);
    for (const SourceFrame& f : frames)
      EXPECT_EQ(base_name(f.file), "inlined.cc");
  }
}

TEST(DwarfLines, TemplateNamesAreTheLinkageNames) {
  for (const std::string& path : {kPie, kNoPie}) {
    SCOPED_TRACE(path);
    std::optional<DwarfLines> dwarf = DwarfLines::open(path);
    ASSERT_TRUE(dwarf);
    ElfSymbolTable table = ElfSymbolTable::load(path);
    std::vector<SourceFrame> frames =
        frames_where(*dwarf, table, kScaledLong, kTwiceLong, marker_line("LINE-TWICE"));
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_TRUE(frames[0].inlined);
    EXPECT_EQ(frames[1],
              (SourceFrame{kScaledLong, frames[1].file, marker_line("LINE-SCALED"), false}));
    EXPECT_EQ(base_name(frames[1].file), "inlined.cc");
  }
}

TEST(DwarfLines, AgreesWithEuAddr2line) {
  std::string tool = find_tool("eu-addr2line");
  if (tool.empty())
    GTEST_SKIP() << "eu-addr2line is not installed (elfutils; scripts/setup.sh --test)";
  for (const std::string& path : {kPie, kNoPie}) {
    SCOPED_TRACE(path);
    std::optional<DwarfLines> dwarf = DwarfLines::open(path);
    ASSERT_TRUE(dwarf);
    // Every byte from the first function to the end of the last:
    // instruction starts and middles, inlined and not, code without DWARF
    // (_start, _init), padding and the PLT between functions.
    ElfSymbolTable table = ElfSymbolTable::load(path);
    const std::vector<ElfSymbol>& symbols = table.symbols();
    ASSERT_FALSE(symbols.empty());
    uint64_t end = 0;
    for (const ElfSymbol& s : symbols)
      end = std::max(end, s.address + s.size);
    std::vector<uint64_t> addresses;
    for (uint64_t a = symbols.front().address; a < end; ++a)
      addresses.push_back(a);
    ASSERT_GE(addresses.size(), 300u);
    std::map<uint64_t, std::vector<SourceFrame>> expected = addr2line(tool, path, addresses);
    size_t with_dwarf = 0, inlined = 0;
    for (uint64_t a : addresses) {
      SCOPED_TRACE(testing::Message() << "address 0x" << std::hex << a);
      std::vector<SourceFrame> got = dwarf->frames(a);
      auto it = expected.find(a);
      ASSERT_NE(it, expected.end());
      const std::vector<SourceFrame>& want = it->second;
      if (got.empty()) {
        // eu-addr2line falls back to the ELF symbol, but knows no line.
        ASSERT_EQ(want.size(), 1u);
        EXPECT_EQ(want[0].line, 0);
        continue;
      }
      ++with_dwarf;
      inlined += got.size() > 1;
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        // Without a DWARF function eu-addr2line prints the ELF symbol.
        if (!got[i].function.empty()) {
          EXPECT_EQ(got[i].function, want[i].function) << "frame " << i;
        }
        EXPECT_EQ(got[i].line, want[i].line) << "frame " << i;
        EXPECT_EQ(base_name(got[i].file), base_name(want[i].file)) << "frame " << i;
        EXPECT_EQ(got[i].inlined, i + 1 < got.size()) << "frame " << i;
      }
    }
    // The comparison is only worth something if it compared frames.
    EXPECT_GE(with_dwarf, 100u);
    EXPECT_GE(inlined, 30u);
  }
}

TEST(DwarfLines, SeparateDebuginfoGivesTheSameFrames) {
  std::string objcopy = find_tool("objcopy");
  if (objcopy.empty())
    GTEST_SKIP() << "objcopy is not installed (binutils)";
  // Made at test time: the build tree keeps only what CMake built.
  std::string debug = temp_path("inlined_pie.debug");
  std::string command = shell_quoted(objcopy) + " --only-keep-debug " + shell_quoted(kPie) + " " +
                        shell_quoted(debug);
  ASSERT_EQ(run(command).status, 0) << command;
  std::optional<DwarfLines> from_binary = DwarfLines::open(kPie);
  std::optional<DwarfLines> from_debug = DwarfLines::open(debug);
  ASSERT_TRUE(from_binary);
  ASSERT_TRUE(from_debug);
  ElfSymbolTable table = ElfSymbolTable::load(kPie);
  const ElfSymbol* sym = symbol_named(table, kContaining);
  ASSERT_NE(sym, nullptr);
  for (uint64_t a = sym->address; a < sym->address + sym->size; ++a)
    EXPECT_EQ(from_debug->frames(a), from_binary->frames(a)) << std::hex << a;
}

// Debuginfo ships with its DWARF compressed: zlib (Debian's), zstd (newer
// toolchains, which libdw 0.188 cannot read on its own).
// The header of the section called `name` in the ELF file `bytes`, if any.
std::optional<GElf_Shdr> section_named(char* bytes, size_t size, const char* name) {
  elf_version(EV_CURRENT);
  Elf* elf = elf_memory(bytes, size);
  std::optional<GElf_Shdr> found;
  size_t names = 0;
  if (elf && elf_getshdrstrndx(elf, &names) == 0)
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
      GElf_Shdr shdr;
      const char* n = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, names, shdr.sh_name) : nullptr;
      if (n && std::strcmp(n, name) == 0)
        found = shdr;
    }
  elf_end(elf);
  return found;
}

TEST(DwarfLines, CompressedSectionsGiveTheSameFrames) {
  std::string objcopy = find_tool("objcopy");
  if (objcopy.empty())
    GTEST_SKIP() << "objcopy is not installed (binutils)";
  std::optional<DwarfLines> plain = DwarfLines::open(kPie);
  ASSERT_TRUE(plain);
  ElfSymbolTable table = ElfSymbolTable::load(kPie);
  const ElfSymbol* sym = symbol_named(table, kContaining);
  ASSERT_NE(sym, nullptr);
  for (const std::string kind : {"zlib", "zstd"}) {
    SCOPED_TRACE(kind);
    std::string compressed = temp_path("inlined_pie." + kind);
    std::string command = shell_quoted(objcopy) + " --compress-debug-sections=" + kind + " " +
                          shell_quoted(kPie) + " " + shell_quoted(compressed);
    ASSERT_EQ(run(command).status, 0) << command;
    ElfImage image = inflated_elf(compressed);
    ASSERT_TRUE(image) << "nothing inflated: the test would test nothing";
    const auto info = section_named(image.data(), image.size(), ".debug_info");
    ASSERT_TRUE(info);
    EXPECT_EQ(info->sh_flags & SHF_COMPRESSED, 0u);
    const auto locations = section_named(image.data(), image.size(), ".debug_loclists");
    ASSERT_TRUE(locations);
    EXPECT_EQ(locations->sh_type, SHT_NOBITS) << "naming never reads it";
    // Nor does anything read the compressed bytes: the image holds no copy.
    std::string file;
    {
      std::ifstream in(compressed, std::ios::binary);
      file.assign(std::istreambuf_iterator<char>(in), {});
    }
    const auto packed = section_named(file.data(), file.size(), ".debug_info");
    ASSERT_TRUE(packed && (packed->sh_flags & SHF_COMPRESSED));
    ASSERT_LE(packed->sh_offset + packed->sh_size, image.size());
    EXPECT_TRUE(std::all_of(image.data() + packed->sh_offset,
                            image.data() + packed->sh_offset + packed->sh_size,
                            [](char c) { return c == 0; }));
    std::optional<DwarfLines> dwarf = DwarfLines::open(compressed);
    ASSERT_TRUE(dwarf);
    size_t named = 0;
    for (uint64_t a = sym->address; a < sym->address + sym->size; ++a) {
      const std::vector<SourceFrame> frames = dwarf->frames(a);
      EXPECT_EQ(frames, plain->frames(a)) << std::hex << a;
      named += !frames.empty();
    }
    EXPECT_GT(named, 0u);
  }
  EXPECT_FALSE(inflated_elf(kPie)) << "nothing to inflate";
}

// A compressed section that does not inflate to what it claims: no copy,
// and libdw, given the file itself, decides; never a crash.
TEST(DwarfLines, DamagedCompressedSectionsAreNotInflated) {
  std::string objcopy = find_tool("objcopy");
  if (objcopy.empty())
    GTEST_SKIP() << "objcopy is not installed (binutils)";
  std::string compressed = temp_path("inlined_pie.damaged");
  std::string command = shell_quoted(objcopy) + " --compress-debug-sections=zlib " +
                        shell_quoted(kPie) + " " + shell_quoted(compressed);
  ASSERT_EQ(run(command).status, 0) << command;
  std::string bytes;
  {
    std::ifstream in(compressed, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  // Every compressed section starts with its Elf64_Chdr: ELFCOMPRESS_ZLIB,
  // then the inflated size. Claim a byte more than there is in each.
  size_t damaged = 0;
  for (size_t at = 0; at + 24 <= bytes.size(); at += 8) {
    uint32_t type = 0;
    uint64_t size = 0, align = 0;
    std::memcpy(&type, &bytes[at], 4);
    std::memcpy(&size, &bytes[at + 8], 8);
    std::memcpy(&align, &bytes[at + 16], 8);
    if (type == 1 && size > 0 && size < (1u << 24) && align == 1 && bytes[at + 24] == 0x78) {
      ++size;
      std::memcpy(&bytes[at + 8], &size, 8);
      ++damaged;
    }
  }
  ASSERT_GT(damaged, 0u);
  std::ofstream(compressed, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_FALSE(inflated_elf(compressed));
  std::optional<DwarfLines> dwarf = DwarfLines::open(compressed);
  if (dwarf)
    (void)dwarf->frames(0);
}

// The fixture compressed with objcopy, at `name` in the test's directory;
// "" (the test skips) without objcopy.
std::string compressed_copy(const std::string& name) {
  const std::string objcopy = find_tool("objcopy");
  if (objcopy.empty())
    return "";
  const std::string path = temp_path(name);
  const std::string command = shell_quoted(objcopy) + " --compress-debug-sections=zlib " +
                              shell_quoted(kPie) + " " + shell_quoted(path);
  EXPECT_EQ(run(command).status, 0) << command;
  return path;
}

// A fresh, private cache directory.
InflatedCache fresh_cache(const std::string& name) {
  const std::string dir = temp_path(name);
  fs::remove_all(dir);
  return InflatedCache{.dir = dir};
}

// The frames of every address of the fixture's `containing`.
std::vector<std::vector<SourceFrame>> all_frames(DwarfLines& dwarf) {
  ElfSymbolTable table = ElfSymbolTable::load(kPie);
  const ElfSymbol* sym = symbol_named(table, kContaining);
  std::vector<std::vector<SourceFrame>> out;
  for (uint64_t a = sym ? sym->address : 0; sym && a < sym->address + sym->size; ++a)
    out.push_back(dwarf.frames(a));
  return out;
}

// The compressed .debug_info's bytes zeroed, its header kept: a file that
// no longer inflates, as only a cached copy would still read.
void spoil_debug_info(const std::string& path) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto info = section_named(bytes.data(), bytes.size(), ".debug_info");
  ASSERT_TRUE(info && (info->sh_flags & SHF_COMPRESSED));
  std::fill_n(bytes.begin() + static_cast<long>(info->sh_offset) + 24, info->sh_size - 24, '\0');
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(InflatedCache, ACompressedFileIsInflatedOnceThenReadFromTheCache) {
  const std::string compressed = compressed_copy("inlined_pie.cached");
  if (compressed.empty())
    GTEST_SKIP() << "objcopy is not installed (binutils)";
  std::optional<DwarfLines> plain = DwarfLines::open(kPie);
  ASSERT_TRUE(plain);
  const auto expected = all_frames(*plain);
  ASSERT_FALSE(expected.empty());

  const InflatedCache cache = fresh_cache("inflated-cache");
  std::optional<DwarfLines> first = DwarfLines::open(compressed, cache);
  ASSERT_TRUE(first);
  EXPECT_EQ(all_frames(*first), expected);
  const std::string entry =
      cache.dir + "/" + hex_bytes(read_elf_identity(compressed).build_id) + ".debug";
  struct stat st {};
  ASSERT_EQ(stat(entry.c_str(), &st), 0) << "kept by build-id";
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(cache.dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  // The file itself no longer inflates: only the cache names its frames.
  spoil_debug_info(compressed);
  std::optional<DwarfLines> uncached = DwarfLines::open(compressed);
  EXPECT_FALSE(uncached && all_frames(*uncached) == expected) << "the test would test nothing";
  std::optional<DwarfLines> cached = DwarfLines::open(compressed, cache);
  ASSERT_TRUE(cached);
  EXPECT_EQ(all_frames(*cached), expected);
}

TEST(InflatedCache, AnEntryOthersCouldHaveWrittenOrOfAnotherFileIsNotRead) {
  const std::string compressed = compressed_copy("inlined_pie.untrusted");
  if (compressed.empty())
    GTEST_SKIP() << "objcopy is not installed (binutils)";
  const std::string build_id = read_elf_identity(compressed).build_id;
  ASSERT_FALSE(build_id.empty());
  ASSERT_NE(read_elf_identity(kNoPie).build_id, build_id);
  const InflatedCache cache = fresh_cache("inflated-untrusted");
  ASSERT_TRUE(DwarfLines::open(compressed, cache));
  EXPECT_TRUE(find_inflated(cache, build_id));
  const std::string entry = cache.dir + "/" + hex_bytes(build_id) + ".debug";
  ASSERT_EQ(chmod(entry.c_str(), 0620), 0);
  EXPECT_FALSE(find_inflated(cache, build_id)) << "writable by its group";
  fs::copy_file(kNoPie, entry, fs::copy_options::overwrite_existing);
  ASSERT_EQ(chmod(entry.c_str(), 0600), 0);
  EXPECT_FALSE(find_inflated(cache, build_id)) << "another file's build-id";
  // Opened again, the file is inflated and kept afresh.
  std::optional<DwarfLines> dwarf = DwarfLines::open(compressed, cache);
  ASSERT_TRUE(dwarf);
  EXPECT_FALSE(all_frames(*dwarf).empty());
  EXPECT_TRUE(find_inflated(cache, build_id));
}

TEST(InflatedCache, TheFilesUsedLongestAgoGoPastTheLimit) {
  InflatedCache cache = fresh_cache("inflated-trim");
  cache.limit = 2500;
  const std::string image =
      "\x7f"
      "ELF" +
      std::string(996, 'x');
  const auto path = [&](const std::string& id) {
    return cache.dir + "/" + hex_bytes(id) + ".debug";
  };
  keep_inflated(cache, "a", image);
  keep_inflated(cache, "b", image);
  // "a" used last (a hit touches it), "b" longest ago.
  const timespec old[2] = {{.tv_sec = 1000, .tv_nsec = 0}, {.tv_sec = 1000, .tv_nsec = 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path("b").c_str(), old, 0), 0);
  keep_inflated(cache, "c", image);
  EXPECT_TRUE(fs::exists(path("a")));
  EXPECT_FALSE(fs::exists(path("b")));
  EXPECT_TRUE(fs::exists(path("c")));
  keep_inflated(cache, "d", std::string(3000, 'x'));
  EXPECT_FALSE(fs::exists(path("d"))) << "larger than the whole cache";
  keep_inflated(InflatedCache{}, "e", image);  // no cache: nothing, no error
}

// --cache-dir . in a directory of recordings deleted them, oldest first,
// to bring it under the limit. The cache removes only its own entries, in
// a directory it made, found empty, or holding nothing but its entries
// (tagged then); one that holds anything else is not written to.
TEST(InflatedCache, NeverRemovesWhatItDidNotWrite) {
  std::vector<std::string> warnings;
  InflatedCache cache = fresh_cache("inflated-foreign");
  cache.limit = 2500;
  cache.warn = [&](const std::string& w) { warnings.push_back(w); };
  const std::string image =
      "\x7f"
      "ELF" +
      std::string(996, 'x');
  fs::create_directories(cache.dir);
  const std::string recording = cache.dir + "/x.data";
  std::ofstream(recording) << std::string(4000, 'r');
  keep_inflated(cache, "a", image);
  keep_inflated(cache, "b", image);
  EXPECT_TRUE(fs::exists(recording));
  EXPECT_FALSE(fs::exists(cache.dir + "/61.debug")) << "not written where others' files are";
  ASSERT_EQ(warnings.size(), 1u) << "said once";
  EXPECT_NE(warnings[0].find("holds files ebprof-report did not write"), std::string::npos);

  // Its own directory: a file named like an entry that is not one stays.
  InflatedCache own = fresh_cache("inflated-own");
  own.limit = 2500;
  keep_inflated(own, "a", image);
  EXPECT_TRUE(fs::exists(own.dir + "/CACHEDIR.TAG"));
  const std::string lookalike = own.dir + "/ab.debug";
  std::ofstream(lookalike) << std::string(4000, 'n');  // not an ELF file
  keep_inflated(own, "b", image);
  keep_inflated(own, "c", image);
  EXPECT_TRUE(fs::exists(lookalike));
  EXPECT_TRUE(fs::exists(own.dir + "/CACHEDIR.TAG"));
}

TEST(DwarfFiles, PrefetchedFilesReadAsOpenedOnes) {
  std::optional<DwarfLines> direct = DwarfLines::open(kPie);
  ASSERT_TRUE(direct);
  ElfSymbolTable table = ElfSymbolTable::load(kPie);
  const ElfSymbol* sym = symbol_named(table, kContaining);
  ASSERT_NE(sym, nullptr);
  DwarfFiles files({});
  files.prefetch(kPie);
  files.prefetch(kPie);  // once is enough
  files.prefetch("/nonexistent/file");
  DwarfLines* prefetched = files.get(kPie);
  ASSERT_NE(prefetched, nullptr);
  EXPECT_EQ(files.get(kPie), prefetched) << "opened once";
  for (uint64_t a = sym->address; a < sym->address + sym->size; ++a)
    EXPECT_EQ(prefetched->frames(a), direct->frames(a)) << std::hex << a;
  EXPECT_EQ(files.get("/nonexistent/file"), nullptr);
  DwarfLines* asked = files.get(kNoPie);  // never prefetched: opened by the asker
  ASSERT_NE(asked, nullptr);
  EXPECT_FALSE(
      asked->frames(symbol_named(ElfSymbolTable::load(kNoPie), kContaining)->address).empty());
}

TEST(DwarfFiles, FilesNobodyAskedForDoNotHoldUpTheEnd) {
  // Destroyed while its workers may still be opening: it waits for them,
  // then ends.
  DwarfFiles files({});
  for (const std::string& path : {kPie, kNoPie, kObject})
    files.prefetch(path);
}

TEST(DwarfLines, FilesWithoutDwarfGiveNothing) {
  std::string strip = find_tool("strip");
  if (strip.empty())
    GTEST_SKIP() << "strip is not installed (binutils)";
  std::string stripped = temp_path("inlined_pie.stripped");
  std::string command =
      shell_quoted(strip) + " -g -o " + shell_quoted(stripped) + " " + shell_quoted(kPie);
  ASSERT_EQ(run(command).status, 0) << command;
  EXPECT_FALSE(DwarfLines::open(stripped));

  // Distribution binaries are stripped too; whatever this one has, looking
  // up addresses must not fail.
  if (std::optional<DwarfLines> system = DwarfLines::open("/bin/true")) {
    for (uint64_t a : {0ul, 0x1000ul, 0x4000ul, ~0ul})
      system->frames(a);
  }
}

TEST(DwarfLines, UnusableFilesGiveNullopt) {
  EXPECT_FALSE(DwarfLines::open(testing::TempDir() + "/does-not-exist"));
  EXPECT_FALSE(DwarfLines::open(testing::TempDir()));  // a directory
  EXPECT_FALSE(DwarfLines::open("/dev/null"));         // not a regular file
  EXPECT_FALSE(DwarfLines::open(kSource));             // not ELF
  // An object file has DWARF but no virtual addresses.
  EXPECT_FALSE(DwarfLines::open(kObject));
}

TEST(DwarfLines, AddressesOutsideAnyUnitGiveNoFrames) {
  std::optional<DwarfLines> dwarf = DwarfLines::open(kPie);
  ASSERT_TRUE(dwarf);
  EXPECT_TRUE(dwarf->frames(0).empty());
  EXPECT_TRUE(dwarf->frames(~0ull).empty());
}

TEST(DwarfLines, MovedToObjectKeepsWorking) {
  std::optional<DwarfLines> opened = DwarfLines::open(kNoPie);
  ASSERT_TRUE(opened);
  ElfSymbolTable table = ElfSymbolTable::load(kNoPie);
  const ElfSymbol* sym = symbol_named(table, kContaining);
  ASSERT_NE(sym, nullptr);
  std::vector<SourceFrame> before = opened->frames(sym->address);
  ASSERT_FALSE(before.empty());
  DwarfLines moved = std::move(*opened);
  opened.reset();
  EXPECT_EQ(moved.frames(sym->address), before);
}

}  // namespace
}  // namespace ebprof::report
