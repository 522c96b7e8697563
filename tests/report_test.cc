#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "browser.h"
#include "common/elf_file.h"
#include "common/error.h"
#include "format/reader.h"
#include "format/writer.h"
#include "record/proc_maps.h"
#include "report/debuginfod.h"
#include "report/demangle.h"
#include "report/diff.h"
#include "report/dump_writer.h"
#include "report/flamegraph_writer.h"
#include "report/folded_writer.h"
#include "report/info_writer.h"
#include "report/kernel_symbolizer.h"
#include "report/merge.h"
#include "report/pprof.pb.h"
#include "report/pprof_writer.h"
#include "report/sample_filter.h"
#include "report/script_writer.h"
#include "report/stack_filter.h"
#include "report/text.h"
#include "report/top_writer.h"
#include "report/user_symbolizer.h"
#include "workloads/demo_lib.h"

extern "C" __attribute__((noinline)) int ebprof_test_marker(int x) {
  return x * 3 + 1;
}

namespace ebprof::report {
namespace {

const std::unordered_map<std::string, ElfSymbolTable> kNoEmbedded;
const std::unordered_map<uint32_t, std::vector<ElfSymbol>> kNoJit;

uint64_t address_of(auto* fn) {
  return reinterpret_cast<uint64_t>(fn);
}

TEST(Demangle, CppNamesBecomeReadableOthersStay) {
  EXPECT_EQ(demangle("_ZN4demo8hot_leafEm"), "demo::hot_leaf(unsigned long)");
  EXPECT_EQ(demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"),
            "std::vector<int, std::allocator<int> >::push_back(int const&)");
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle("_Z"), "_Z");
  EXPECT_EQ(demangle("_Znotvalid!"), "_Znotvalid!");
}

// The live mappings of this (PIE) test process, which loads libebprof_demo.so
// at a random base: symbolizing through them exercises load bias for both.
format::ProcessInfo self() {
  record::ElfIdentities identities;
  return record::read_process(static_cast<uint32_t>(getpid()), 0, identities);
}

TEST(UserSymbolizer, NamesFunctionsInAPieAndASharedLibrary) {
  UserSymbolizer user(kNoEmbedded, kNoJit);
  auto p = self();
  uint64_t lib_fn = address_of(&demo::hot_leaf);
  Frame f = user.resolve({&p, 1}, lib_fn + 4, lib_fn + 4);
  EXPECT_EQ(f.name, "demo::hot_leaf(unsigned long)");
  EXPECT_EQ(f.module, "libebprof_demo.so");
  EXPECT_TRUE(f.resolved);

  uint64_t exe_fn = address_of(&ebprof_test_marker);
  f = user.resolve({&p, 1}, exe_fn, exe_fn);
  EXPECT_EQ(f.name, "ebprof_test_marker");
  EXPECT_FALSE(f.kernel);
}

TEST(UserSymbolizer, NeverGuessesANameForUnknownCode) {
  UserSymbolizer user(kNoEmbedded, kNoJit);
  auto p = self();
  void* anon = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(anon, MAP_FAILED);
  auto with_anon = self();
  Frame f = user.resolve({&with_anon, 1}, address_of(anon) + 16, address_of(anon) + 16);
  EXPECT_FALSE(f.resolved);
  EXPECT_EQ(f.name.rfind("[unknown]", 0), 0u) << f.name;
  EXPECT_NE(f.name.find("JIT map missing"), std::string::npos) << f.name;
  munmap(anon, 4096);

  f = user.resolve({&p, 1}, 0x10, 0x10);
  EXPECT_EQ(f.name, "[unknown] (0x10, no mapping)");
  f = user.resolve({}, 0x1234, 0x1234);
  EXPECT_EQ(f.name, "[unknown] (0x1234, process maps not recorded)");

  // A binary that is gone from disk: module and offset, no name.
  format::ProcessInfo moved{1, "x", 0, {{0x400000, 0x500000, 0x1000, "/nonexistent/bin/app"}}, ""};
  f = user.resolve({&moved, 1}, 0x400010, 0x400010);
  EXPECT_EQ(f.name, "[unknown] (app+0x1010, binary not found)");
  EXPECT_EQ(f.module, "app");
}

TEST(UserSymbolizer, NamesJitCodeFromTheProcesssPerfMap) {
  const std::unordered_map<uint32_t, std::vector<ElfSymbol>> jit = {
      {7, {{0x7000, 0x10, "jitted_a"}, {0x7010, 0x20, "_ZN2js4callEv"}}}};
  UserSymbolizer user(kNoEmbedded, jit);
  format::ProcessInfo p{7, "x", 0, {{0x7000, 0x8000, 0, ""}}, ""};
  Frame f = user.resolve({&p, 1}, 0x7014, 0x7014);
  EXPECT_EQ(f.name, "js::call()");  // demangled, like any other name
  EXPECT_EQ(f.module, "perf-7.map");
  EXPECT_TRUE(f.resolved);
  // Past the last symbol's end: not named, and the reason says why.
  f = user.resolve({&p, 1}, 0x7040, 0x7040);
  EXPECT_FALSE(f.resolved);
  EXPECT_NE(f.name.find("JIT map missing"), std::string::npos) << f.name;
  // Another process's map never names this one's code.
  format::ProcessInfo other{8, "x", 0, {{0x7000, 0x8000, 0, ""}}, ""};
  EXPECT_FALSE(user.resolve({&other, 1}, 0x7014, 0x7014).resolved);
}

// A process that mapped `path` where its ELF vaddr `vaddr` runs: one
// mapping over the PT_LOAD segment holding it.
format::ProcessInfo mapped(const std::string& path, uint64_t vaddr, const std::string& recorded) {
  ElfSymbolTable table = ElfSymbolTable::load(path);
  for (const LoadSegment& s : table.segments())
    if (vaddr >= s.vaddr && vaddr < s.vaddr + s.file_size)
      return {7,
              "app",
              0,
              {{0x555500000000 + s.vaddr, 0x555500000000 + s.vaddr + s.file_size, s.offset,
                recorded, table.identity().build_id, table.identity().debuglink}},
              ""};
  ADD_FAILURE() << "no segment of " << path << " holds " << vaddr;
  return {};
}

uint64_t vaddr_of(const std::string& path, const std::string& name) {
  const ElfSymbolTable table = ElfSymbolTable::load(path);
  for (const ElfSymbol& s : table.symbols())
    if (s.name == name)
      return s.address;
  ADD_FAILURE() << name << " is not in " << path;
  return 0;
}

// Stripped binaries name their frames from separate debuginfo, found by
// .gnu_debuglink next to the binary or by build-id under a debug directory;
// without it the frame says why it has no name.
TEST(UserSymbolizer, NamesAStrippedBinaryFromItsDebuginfo) {
  const std::string dir = EBPROF_STRIPPED_DIR;
  const std::string stripped = dir + "/hotcold";
  ASSERT_FALSE(ElfSymbolTable::load(stripped).complete());
  const uint64_t main_vaddr = vaddr_of(dir + "/hotcold.debug", "main");
  const uint64_t in_main = 0x555500000000 + main_vaddr + 1;

  // By debuglink: hotcold.debug sits next to the binary.
  format::ProcessInfo p = mapped(stripped, main_vaddr, stripped);
  EXPECT_EQ(UserSymbolizer(kNoEmbedded, kNoJit).resolve({&p, 1}, in_main, in_main).name, "main");

  // Alone, it says why.
  const std::string alone = testing::TempDir() + "/alone";
  std::filesystem::create_directories(alone);
  std::filesystem::copy_file(stripped, alone + "/hotcold",
                             std::filesystem::copy_options::overwrite_existing);
  p = mapped(alone + "/hotcold", main_vaddr, alone + "/hotcold");
  SymbolizeOptions nowhere;
  nowhere.sources.debug_dirs = {testing::TempDir() + "/no-debug-here"};
  Frame f = UserSymbolizer(kNoEmbedded, kNoJit, nowhere).resolve({&p, 1}, in_main, in_main);
  EXPECT_FALSE(f.resolved);
  EXPECT_EQ(f.reason, "stripped without debuginfo");
  EXPECT_NE(f.name.find("hotcold+0x"), std::string::npos) << f.name;

  // By build-id, under a debug directory.
  const std::string debug_dir = testing::TempDir() + "/debug";
  const std::string id = hex_bytes(ElfSymbolTable::load(stripped).identity().build_id);
  const std::string by_id =
      debug_dir + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  std::filesystem::create_directories(std::filesystem::path(by_id).parent_path());
  std::filesystem::copy_file(dir + "/hotcold.debug", by_id,
                             std::filesystem::copy_options::overwrite_existing);
  SymbolizeOptions by_build_id;
  by_build_id.sources.debug_dirs = {debug_dir};
  EXPECT_EQ(
      UserSymbolizer(kNoEmbedded, kNoJit, by_build_id).resolve({&p, 1}, in_main, in_main).name,
      "main");
}

// DEBUGINFOD_URLS: debuginfo found nowhere locally comes from a server, here
// a real debuginfod serving the stripped binary's debuginfo on localhost.
TEST(UserSymbolizer, FetchesDebuginfoFromDebuginfod) {
  if (system("command -v debuginfod >/dev/null") != 0)
    GTEST_SKIP() << "debuginfod is not installed (apt-get install debuginfod)";
  const std::string root = testing::TempDir() + "/debuginfod-" + std::to_string(getpid());
  std::filesystem::create_directories(root + "/served");
  std::filesystem::create_directories(root + "/alone");
  std::filesystem::copy_file(std::string(EBPROF_STRIPPED_DIR) + "/hotcold.debug",
                             root + "/served/hotcold.debug");
  std::filesystem::copy_file(std::string(EBPROF_STRIPPED_DIR) + "/hotcold",
                             root + "/alone/hotcold");
  const std::string port = std::to_string(20000 + getpid() % 20000);
  pid_t server = fork();
  if (server == 0) {
    execlp("debuginfod", "debuginfod", "-F", (root + "/served").c_str(), "-p", port.c_str(), "-d",
           (root + "/index.sqlite").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(server, 0);
  setenv("DEBUGINFOD_URLS", ("http://127.0.0.1:" + port).c_str(), 1);
  const uint64_t main_vaddr = vaddr_of(std::string(EBPROF_STRIPPED_DIR) + "/hotcold.debug", "main");
  const uint64_t in_main = 0x555500000000 + main_vaddr + 1;
  format::ProcessInfo p = mapped(root + "/alone/hotcold", main_vaddr, root + "/alone/hotcold");
  SymbolizeOptions o;
  o.sources.debug_dirs = {root + "/no-local-debuginfo"};
  std::string name;
  // The server indexes its directory after it starts; the client caches
  // misses, so each try gets a cache of its own.
  for (int attempt = 0; attempt < 50 && name != "main"; ++attempt) {
    setenv("DEBUGINFOD_CACHE_PATH", (root + "/cache" + std::to_string(attempt)).c_str(), 1);
    std::shared_ptr<Debuginfod> client = Debuginfod::from_environment();
    ASSERT_TRUE(client);
    o.debuginfod = [client](const std::string& id) { return client->find_debuginfo(id); };
    name = UserSymbolizer(kNoEmbedded, kNoJit, o).resolve({&p, 1}, in_main, in_main).name;
    if (name != "main")
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  kill(server, SIGTERM);
  waitpid(server, nullptr, 0);
  unsetenv("DEBUGINFOD_URLS");
  unsetenv("DEBUGINFOD_CACHE_PATH");
  EXPECT_EQ(name, "main");
}

// A recording of thousands of binaries nobody has debuginfo for must not
// mean thousands of slow server round trips: at most 200 per report, and
// never for a binary that has it locally or has no build-id.
TEST(UserSymbolizer, AsksDebuginfodAtMost200Times) {
  format::ProcessInfo p{7, "app", 0, {}, ""};
  for (uint64_t i = 0; i < 250; ++i)
    p.mappings.push_back({0x10000000 + i * 0x1000, 0x10000000 + (i + 1) * 0x1000, 0,
                          "/nonexistent/lib" + std::to_string(i) + ".so",
                          "build-id-" + std::to_string(i), ""});
  p.mappings.push_back({0x20000000, 0x20001000, 0, "/nonexistent/no-build-id", "", ""});
  int queries = 0;
  SymbolizeOptions o;
  o.debuginfod = [&](const std::string&) {
    ++queries;
    return std::string();
  };
  UserSymbolizer user(kNoEmbedded, kNoJit, o);
  for (const format::Mapping& m : p.mappings) {
    Frame f = user.resolve({&p, 1}, m.start + 0x10, m.start + 0x10);
    EXPECT_EQ(f.reason, "binary not found") << m.path;
    user.resolve({&p, 1}, m.start + 0x20, m.start + 0x20);  // the same binary: no new query
  }
  EXPECT_EQ(queries, 200);
}

// --symfs: the recorded path is looked up under another root; a file there
// with another build-id is never used, and said so once.
TEST(UserSymbolizer, SymfsAndAWarningPerMismatchedBinary) {
  const std::string symfs = testing::TempDir() + "/symfs";
  std::filesystem::create_directories(symfs + "/opt/app");
  std::filesystem::copy_file(EBPROF_HOTCOLD_BIN, symfs + "/opt/app/hotcold",
                             std::filesystem::copy_options::overwrite_existing);
  const uint64_t main_vaddr = vaddr_of(EBPROF_HOTCOLD_BIN, "main");
  const uint64_t in_main = 0x555500000000 + main_vaddr + 1;
  format::ProcessInfo p = mapped(EBPROF_HOTCOLD_BIN, main_vaddr, "/opt/app/hotcold");
  SymbolizeOptions o;
  o.sources.symfs = symfs;
  EXPECT_EQ(UserSymbolizer(kNoEmbedded, kNoJit, o).resolve({&p, 1}, in_main, in_main).name, "main");

  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  p.mappings[0].build_id = "\x01\x02";  // recorded from another build
  UserSymbolizer other(kNoEmbedded, kNoJit, o);
  Frame f = other.resolve({&p, 1}, in_main, in_main);
  EXPECT_EQ(f.reason, "build-id mismatch");
  other.resolve({&p, 1}, in_main + 1, in_main + 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("recorded 0102"), std::string::npos) << warnings[0];
}

// With DWARF at hand, functions inlined at an address become frames of
// their own, innermost first, each with its file and line.
TEST(UserSymbolizer, InlinedFunctionsAreFramesOfTheirOwn) {
  const std::string bin = EBPROF_INLINED_PIE;
  const ElfSymbolTable table = ElfSymbolTable::load(bin);
  const ElfSymbol* containing = nullptr;
  for (const ElfSymbol& s : table.symbols())
    if (s.name == "_ZN7fixture10containingEm")
      containing = &s;
  ASSERT_NE(containing, nullptr);
  format::ProcessInfo p = mapped(bin, containing->address, bin);
  SymbolizeOptions o;
  o.lines = true;
  UserSymbolizer user(kNoEmbedded, kNoJit, o);
  bool found = false;
  for (uint64_t v = containing->address; v < containing->address + containing->size && !found;
       ++v) {
    const uint64_t at = 0x555500000000 + v;
    std::vector<Frame> frames;
    user.resolve_all({&p, 1}, at, at, frames);
    if (frames.size() < 3)
      continue;
    found = true;
    EXPECT_TRUE(frames[0].inlined);
    EXPECT_TRUE(frames[1].inlined);
    EXPECT_FALSE(frames[2].inlined);
    EXPECT_TRUE(frames[0].name.starts_with("fixture::inner(unsigned long) inlined.cc:"))
        << frames[0].name;
    EXPECT_TRUE(frames[1].name.starts_with("fixture::outer(unsigned long) inlined.cc:"))
        << frames[1].name;
    EXPECT_TRUE(frames[2].name.starts_with("fixture::containing(unsigned long) inlined.cc:"))
        << frames[2].name;
    EXPECT_EQ(frames[2].system_name, "_ZN7fixture10containingEm");
    for (const Frame& f : frames)
      EXPECT_GT(f.line, 0);

    // --no-inline: the containing function alone, as perf script shows it.
    SymbolizeOptions flat;
    flat.inline_frames = false;
    std::vector<Frame> outer;
    UserSymbolizer(kNoEmbedded, kNoJit, flat).resolve_all({&p, 1}, at, at, outer);
    ASSERT_EQ(outer.size(), 1u);
    EXPECT_EQ(outer[0].name, "fixture::containing(unsigned long)");
    EXPECT_FALSE(outer[0].inlined);
  }
  EXPECT_TRUE(found) << "no address of containing() has two inlined frames";
}

TEST(UserSymbolizer, NoDemangleKeepsSystemNames) {
  auto p = self();
  uint64_t lib_fn = address_of(&demo::hot_leaf);
  SymbolizeOptions raw;
  raw.demangle = false;
  EXPECT_EQ(UserSymbolizer(kNoEmbedded, kNoJit, raw).resolve({&p, 1}, lib_fn + 4, lib_fn + 4).name,
            "_ZN4demo8hot_leafEm");
}

TEST(UserSymbolizer, NeverOpensAFifoOrDeviceNamedByARecording) {
  std::string fifo = testing::TempDir() + "/not-a-binary.fifo";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  UserSymbolizer user(kNoEmbedded, kNoJit);
  for (const std::string& path : {fifo, std::string("/dev/null")}) {
    format::ProcessInfo p{1, "x", 0, {{0x400000, 0x500000, 0, path}}, ""};
    Frame f = user.resolve({&p, 1}, 0x400010, 0x400010);  // would block forever on open()
    EXPECT_FALSE(f.resolved) << path;
  }
  unlink(fifo.c_str());
}

TEST(UserSymbolizer, CodeMappedAfterACaptureIsFoundInALaterOne) {
  UserSymbolizer user(kNoEmbedded, kNoJit);
  uint64_t exe_fn = address_of(&ebprof_test_marker);
  format::ProcessInfo early{1, "x", 0, {}, ""};  // e.g. read while ld.so was still mapping
  std::vector<format::ProcessInfo> captures = {early, self()};
  EXPECT_EQ(user.resolve(captures, exe_fn, exe_fn).name, "ebprof_test_marker");
  // The capture in effect wins over a later one that maps the range elsewhere.
  format::ProcessInfo other{1, "x", 0, {{exe_fn - 0x10, exe_fn + 0x10, 0, "/nonexistent/b"}}, ""};
  std::vector<format::ProcessInfo> reused = {self(), other};
  EXPECT_EQ(user.resolve(reused, exe_fn, exe_fn).name, "ebprof_test_marker");
  format::ProcessInfo gone{1, "x", 0, {}, "process exited before its maps were read"};
  EXPECT_EQ(user.resolve({&gone, 1}, 0x10, 0x10).name,
            "[unknown] (0x10, process exited before its maps were read)");
}

// A binary at the recorded path that is not the one that ran (rebuilt,
// upgraded, another machine's) must never lend its names.
// The recorder could not read the file's build-id (the process exited
// first): the file now at the path cannot be verified, so it is not used.
TEST(UserSymbolizer, AFileTheRecordingCouldNotIdentifyIsNotUsed) {
  UserSymbolizer user(kNoEmbedded, kNoJit);
  uint64_t exe_fn = address_of(&ebprof_test_marker);
  auto p = self();
  for (auto& m : p.mappings)
    m.build_id.clear();
  Frame f = user.resolve({&p, 1}, exe_fn, exe_fn);
  EXPECT_FALSE(f.resolved);
  EXPECT_NE(f.name.find("build-id mismatch"), std::string::npos) << f.name;
}

TEST(UserSymbolizer, ABinaryWithAnotherBuildIdIsNeverUsed) {
  UserSymbolizer user(kNoEmbedded, kNoJit);
  uint64_t exe_fn = address_of(&ebprof_test_marker);
  auto p = self();
  for (auto& m : p.mappings)
    if (!m.build_id.empty())
      m.build_id[0] ^= 0xff;
  Frame f = user.resolve({&p, 1}, exe_fn, exe_fn);
  EXPECT_FALSE(f.resolved);
  EXPECT_NE(f.name.find("build-id mismatch"), std::string::npos) << f.name;
}

// Another machine, or the binary deleted since: the recording's own table
// names the frame, found by the mapping's build-id.
TEST(UserSymbolizer, AnEmbeddedTableNamesFramesOfAMissingBinary) {
  std::unordered_map<std::string, ElfSymbolTable> embedded;
  embedded.try_emplace("\x01\x02", ElfIdentity{"\x01\x02", ""},
                       std::vector<LoadSegment>{{0x1000, 0x401000, 0x2000}},
                       std::vector<ElfSymbol>{{0x401100, 0x80, "_ZN3app4workEv"}});
  UserSymbolizer user(embedded, kNoJit);
  format::Mapping m{0x7f0000001000, 0x7f0000003000, 0x1000, "/gone/app", "\x01\x02", ""};
  format::ProcessInfo p{1, "app", 0, {m}, ""};
  // file offset 0x1000 + 0x120 -> vaddr 0x401120, inside app::work().
  Frame f = user.resolve({&p, 1}, 0x7f0000001120, 0x7f0000001120);
  EXPECT_EQ(f.name, "app::work()");
  EXPECT_TRUE(f.resolved);
  p.mappings[0].path = "/gone/app (deleted)";  // deleted: the embedded table still names it
  EXPECT_EQ(user.resolve({&p, 1}, 0x7f0000001120, 0x7f0000001120).name, "app::work()");
  p.mappings[0].path = "/gone/app";
  p.mappings[0].build_id = "\x03";  // no table for this build: unknown, with why
  EXPECT_EQ(user.resolve({&p, 1}, 0x7f0000001120, 0x7f0000001120).name,
            "[unknown] (app+0x1120, binary not found)");
}

TEST(ElfSymbolTable, MissingOrForeignFilesAreErrors) {
  EXPECT_THROW(ElfSymbolTable::load("/nonexistent/file"), Error);
  EXPECT_THROW(ElfSymbolTable::load("/proc/self/status"), Error);
}

TEST(KernelSymbolizer, NamesByRangeAndShowsModules) {
  KernelSymbolizer k({{0xffffffff81000100, "schedule", "", 0x100},
                      {0xffffffff81000000, "_stext", "", 0x100},
                      {0xffffffffc0001000, "ext4_read", "ext4", 0x800}});
  EXPECT_EQ(k.resolve(0xffffffff81000150, 0xffffffff81000150).name, "schedule");
  EXPECT_EQ(k.resolve(0xffffffff81000150, 0xffffffff81000150).module, "[kernel.kallsyms]");
  EXPECT_EQ(k.resolve(0xffffffff81000010, 0xffffffff81000010).name, "_stext");
  EXPECT_EQ(k.resolve(0xffffffffc0001234, 0xffffffffc0001234).module, "[ext4]");
  EXPECT_FALSE(k.resolve(0x1000, 0x1000).resolved);
  // Past a symbol's end (a module loaded later, a gap): unknown, not schedule.
  EXPECT_EQ(k.resolve(0xffffffff81000200, 0xffffffff81000200).name,
            "[unknown] (0xffffffff81000200, past schedule)");
  EXPECT_FALSE(KernelSymbolizer({}).resolve(0xffffffff81000000, 0xffffffff81000000).resolved);
}

std::vector<SymbolizedStack> sample_stacks() {
  Frame leaf{"demo::hot_leaf(unsigned long)", "libdemo.so", false, true};
  Frame a{"demo::caller_a()", "hotcold", false, true};
  Frame b{"demo::caller_b()", "hotcold", false, true};
  Frame main_fn{"main", "hotcold", false, true};
  Frame irq{"irq_exit", "[kernel.kallsyms]", true, true};
  return {{10, 10, 0, "hotcold", 70, {leaf, a, main_fn}},
          {10, 12, 1, "hotcold", 25, {leaf, b, main_fn}},
          {11, 11, 1, "hotcold", 5, {irq, leaf, b, main_fn}}};
}

TEST(FoldedWriter, RootFirstCommFirstMergedAndSorted) {
  std::ostringstream out;
  auto stacks = sample_stacks();
  stacks.push_back(stacks[0]);  // same chain from another pid merges
  stacks.back().count = 1;
  write_folded(out, stacks);
  EXPECT_EQ(out.str(),
            "hotcold;main;demo::caller_a();demo::hot_leaf(unsigned long) 71\n"
            "hotcold;main;demo::caller_b();demo::hot_leaf(unsigned long) 25\n"
            "hotcold;main;demo::caller_b();demo::hot_leaf(unsigned long);irq_exit 5\n");
}

TEST(FoldedWriter, PrefixAnnotationsAndDelimiter) {
  std::ostringstream out;
  auto stacks = sample_stacks();
  std::vector<Frame> inlined = stacks[1].frames.get();
  inlined[0].inlined = true;  // hot_leaf inlined into caller_b here
  stacks[1].frames = std::move(inlined);
  write_folded(out, {stacks[1], stacks[2]},
               {.comm = true, .pid = true, .annotate = true, .delimit = true});
  EXPECT_EQ(out.str(),
            "hotcold-10;main;demo::caller_b();demo::hot_leaf(unsigned long)_[i] 25\n"
            "hotcold-11;main;demo::caller_b();demo::hot_leaf(unsigned long);-;irq_exit_[k] 5\n");
  std::ostringstream bare;
  write_folded(bare, {stacks[2]}, {.comm = false});
  EXPECT_EQ(bare.str(), "main;demo::caller_b();demo::hot_leaf(unsigned long);irq_exit 5\n");
}

TEST(FoldedWriter, SeparatorsInCommsAndNamesCannotForgeFrames) {
  std::ostringstream out;
  write_folded(out, {{1, 1, 0, "evil;comm\nx", 3, {{"f;g", "m", false, true}}}});
  EXPECT_EQ(out.str(), "evil_comm_x;f_g 3\n");
}

TEST(TopWriter, LongNamesKeepTheirRowIntact) {
  Profile profile;
  std::string name(3000, 'n');
  std::ostringstream out;
  write_top(
      out, profile,
      {{1, 1, 0, "c", 2, {{name, "m", false, true}}}, {1, 1, 0, "c", 1, {{"g", "m", false, true}}}},
      {.rows = 0});
  std::string text = out.str();
  EXPECT_NE(text.find("[.] " + name + "\n"), std::string::npos);
  EXPECT_NE(text.find("[.] g\n"), std::string::npos);
}

// The rows of a top table, without the header, trailing spaces trimmed.
std::vector<std::string> top_lines(const std::vector<SymbolizedStack>& stacks, TopOptions o) {
  Profile profile;
  profile.recorded_samples = 100;
  std::ostringstream out;
  write_top(out, profile, stacks, o);
  std::vector<std::string> rows;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);)
    if (!line.starts_with("#"))
      rows.push_back(line.substr(0, line.find_last_not_of(' ') + 1));
  return rows;
}

TEST(TopWriter, SelfAndChildrenPerSortKey) {
  auto rows = top_lines(sample_stacks(), {.rows = 0});
  ASSERT_EQ(rows.size(), 2u);
  // hot_leaf: the leaf of 95 samples, on the stack of all 100.
  EXPECT_EQ(rows[0],
            "   100.00%    95.00%        95  hotcold          libdemo.so               [.] "
            "demo::hot_leaf(unsigned long)");
  EXPECT_EQ(
      rows[1],
      "     5.00%     5.00%         5  hotcold          [kernel.kallsyms]        [k] irq_exit");

  // --children: main, on every stack, leads; callers follow.
  rows = top_lines(sample_stacks(), {.rows = 3, .children = true});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NE(rows[0].find("100.00%     0.00%         0  hotcold          hotcold"),
            std::string::npos)
      << rows[0];
  EXPECT_NE(rows[2].find("70.00%     0.00%         0"), std::string::npos) << rows[2];
  EXPECT_NE(rows[2].find("demo::caller_a()"), std::string::npos) << rows[2];

  // Keys without a frame: self equals children.
  rows = top_lines(sample_stacks(), {.rows = 0, .sort = parse_sort_keys("pid,cpu")});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], "    70.00%    70.00%        70  10       0");
  EXPECT_EQ(rows[2], "     5.00%     5.00%         5  11       1");
  EXPECT_THROW(parse_sort_keys("comm,bogus"), Error);
  EXPECT_EQ(parse_sort_keys("symbol,tid"), (std::vector<std::string>{"tid", "symbol"}));
}

TEST(StackFilter, HalvesDsosAndFocus) {
  auto only = [](StackFilter f) {
    auto stacks = sample_stacks();
    filter_stacks(f, stacks);
    uint64_t total = 0;
    for (const auto& s : stacks)
      total += s.count;
    return std::make_pair(stacks, total);
  };
  auto [kernel, kernel_total] = only({.kernel_only = true});
  EXPECT_EQ(kernel_total, 5u);  // stacks with no kernel half are gone
  ASSERT_EQ(kernel.size(), 1u);
  EXPECT_EQ(kernel[0].frames.size(), 1u);
  auto [user, user_total] = only({.user_only = true});
  EXPECT_EQ(user_total, 100u);
  EXPECT_EQ(user[2].frames[0].name, "demo::hot_leaf(unsigned long)");
  EXPECT_EQ(only({.dsos = {"[kernel.kallsyms]"}}).second, 5u);
  EXPECT_EQ(only({.symbol = std::regex("caller_b")}).second, 30u);
  EXPECT_EQ(only({.symbol = std::regex("^nothing$")}).second, 0u);
}

TEST(SampleFilter, ListsTimeAndIdle) {
  const uint64_t start = 100'000'000'000;  // the recording began at 100 s
  format::Sample s{start + 2'500'000'000, 7, 8, 1, 0, 0};
  EXPECT_TRUE(keeps({}, s, "app", start));
  EXPECT_FALSE(keeps({}, format::Sample{start, 0, 0, 0, 0, 0}, "swapper/0", start));
  EXPECT_TRUE(keeps({.include_idle = true}, format::Sample{start, 0, 0, 0, 0, 0}, "x", start));
  EXPECT_FALSE(keeps({.pids = {9}}, s, "app", start));
  EXPECT_TRUE(keeps({.tids = {8, 9}}, s, "app", start));
  EXPECT_FALSE(keeps({.cpus = {0}}, s, "app", start));
  EXPECT_FALSE(keeps({.comms = {"other"}}, s, "app", start));
  SampleFilter window;
  parse_time_window("2,3", window);  // relative: [102 s, 103 s)
  EXPECT_TRUE(keeps(window, s, "app", start));
  parse_time_window(",2.5", window);
  EXPECT_FALSE(keeps(window, s, "app", start));  // the end is exclusive
  parse_time_window("102.6,", window);           // absolute
  EXPECT_FALSE(keeps(window, s, "app", start));
  EXPECT_THROW(parse_time_window("3", window), Error);
  EXPECT_THROW(parse_time_window("3,2", window), Error);
  EXPECT_THROW(parse_time_window("a,b", window), Error);
}

// A small recording written with the real writer, for info and dump.
std::string write_small_recording(const std::string& name = "small.data") {
  std::string path = testing::TempDir() + "/" + name;
  auto w = format::RecordingWriter::create(path);
  format::RecordingInfo info;
  info.writer_version = "9.9.9";
  info.hostname = "box";
  info.event = "cpu-clock";
  info.sample_frequency = 99;
  info.cpu_count = 4;
  info.command_line = {"ebprof-record", "-a"};
  info.start_monotonic_ns = 1'000'000'000;
  w.write(info);
  w.write(format::ProcessInfo{
      7, "app", 1'000'000'000, {{0x1000, 0x2000, 0, "/bin/app", "\xab\xcd", "app.debug"}}, ""});
  w.write(format::EmbeddedSymbols{"\xab\xcd", "/bin/app", {{0, 0, 0x2000}}, {{0x1000, 0x10, "f"}}});
  format::SampleBatch b;
  b.stacks = {{{}, {0x1004}}};
  b.comms = {"app"};
  b.samples = {{1'500'000'000, 7, 7, 1, 0, 0}, {1'600'000'000, 7, 8, 2, 0, 0}};
  w.write(b);
  w.write(format::Losses{2'000'000'000,
                         {{"buffer full", 2, false, 1}, {"user stack unreadable", 1, true, 0}}});
  w.write(format::RecordingEnd{3'000'000'000,
                               {{"buffer full", 2}, {"user stack unreadable", 1, true}}});
  w.close();
  return path;
}

TEST(InfoWriter, SaysWhatTheRecordingIsAndHolds) {
  std::string path = write_small_recording();
  std::ostringstream out;
  write_info(out, load_profile(path), {{"binary not found", 2}});
  std::string text = out.str();
  for (const char* line :
       {"format          1.2, written by ebprof 9.9.9\n", "command line    ebprof-record -a\n",
        "event           cpu-clock at 99 Hz on 4 CPUs", "duration        2.00 s\n",
        "samples         2\n", "processes       1 (1 maps captures, 1 mappings)\n",
        "lost            2 (buffer full: 2)\n", "lost where      cpu 1: 2; reported from ",
        "partial stacks  1 (user stack unreadable: 1)\n",
        "unnamed frames  binary not found in 2 samples (100.0%)\n",
        "embedded        1 binaries, 1 function symbols\n",
        "symbol coverage 1 of 1 sampled binaries with a build-id have embedded symbols",
        "\nsamples                1", "\nelf-symbols            1"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
}

TEST(DumpWriter, PrintsEveryFrameInOrder) {
  std::string path = write_small_recording();
  std::ostringstream out;
  write_dump(out, path);
  std::string text = out.str();
  size_t at = 0;
  for (const char* piece :
       {"# frame 0 at byte 16: header", "host box", "# frame 1 at byte", "pid 7 comm app",
        "/bin/app build-id abcd debuglink app.debug", "elf-symbols", "0x1000 size 0x10 f",
        "stack 0", "user: 0x1004", "comm 0 app",
        "sample time 1600000000 pid 7 tid 8 cpu 2 stack 0 comm 0", "losses at 2000000000",
        "cpu 1 lost 2 buffer full", "cpu 0 partial 1 user stack unreadable", "lost 2 buffer full",
        "partial 1 user stack unreadable", "# 6 frames, format 1.2"}) {
    size_t next = text.find(piece, at);
    ASSERT_NE(next, std::string::npos) << piece << "\n" << text;
    at = next;
  }
}

TEST(TopWriter, SelfTimeOfLeafFramesMostFirst) {
  Profile profile;
  profile.info.event = "cpu-clock";
  profile.info.sample_frequency = 99;
  profile.total_samples = 100;
  std::ostringstream out;
  write_top(out, profile, sample_stacks(), {.rows = 0});
  std::string text = out.str();
  auto hot =
      text.find("95.00%        95  hotcold          libdemo.so               [.] demo::hot_leaf");
  auto irq = text.find("5.00%         5  hotcold          [kernel.kallsyms]        [k] irq_exit");
  EXPECT_NE(hot, std::string::npos) << text;
  EXPECT_NE(irq, std::string::npos) << text;
  EXPECT_LT(hot, irq);
  EXPECT_NE(text.find("# recording has no end frame"), std::string::npos);

  std::ostringstream one;
  write_top(one, profile, sample_stacks(), {.rows = 1});
  EXPECT_EQ(one.str().find("irq_exit"), std::string::npos);
}

// A stack whose leaf address has two functions inlined into a third.
std::vector<Frame> inlined_stack() {
  Frame inner{"inner", "app", false, true, 0x1234, 0, "/bin/app", "_Z5innerv"};
  inner.inlined = true;
  inner.file = "app.cc";
  inner.line = 10;
  Frame middle = inner;
  middle.name = "middle";
  middle.system_name = "_Z6middlev";
  middle.line = 20;
  Frame outer{"outer", "app", false, true, 0x1234, 0x34, "/bin/app", "_Z5outerv"};
  outer.file = "app.cc";
  outer.line = 30;
  Frame caller{"main", "app", false, true, 0x1100, 0x10, "/bin/app", "main"};
  return {inner, middle, outer, caller};
}

perftools::profiles::Profile decode_pprof(const std::string& gz) {
  std::string raw(1 << 20, '\0');
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  zs.next_out = reinterpret_cast<Bytef*>(raw.data());
  zs.avail_out = static_cast<uInt>(raw.size());
  EXPECT_EQ(inflate(&zs, Z_FINISH), Z_STREAM_END);
  raw.resize(zs.total_out);
  inflateEnd(&zs);
  perftools::profiles::Profile p;
  EXPECT_TRUE(p.ParseFromString(raw));
  return p;
}

// pprof keeps inlining inside one location: its lines, innermost first.
// Strings are UTF-8 whatever bytes a comm or a name held.
TEST(PprofWriter, InlinedFramesAreLinesOfOneLocationAndStringsAreUtf8) {
  Profile profile;
  profile.info.event = "cpu-clock";
  profile.info.sample_frequency = 99;
  std::vector<SymbolizedStack> stacks{{7, 8, 1,
                                       "bad\xff\xc0\x80"
                                       "comm\xe2\x82\xac",
                                       3, inlined_stack()}};
  std::ostringstream out;
  write_pprof(out, profile, stacks);
  perftools::profiles::Profile p = decode_pprof(out.str());
  ASSERT_EQ(p.sample_size(), 1);
  ASSERT_EQ(p.sample(0).location_id_size(), 2);
  auto location = [&](uint64_t id) {
    for (const auto& l : p.location())
      if (l.id() == id)
        return l;
    ADD_FAILURE() << "no location " << id;
    return perftools::profiles::Location{};
  };
  auto function_name = [&](uint64_t id) {
    for (const auto& f : p.function())
      if (f.id() == id)
        return p.string_table(f.name());
    return std::string("?");
  };
  const auto leaf = location(p.sample(0).location_id(0));
  ASSERT_EQ(leaf.line_size(), 3);
  EXPECT_EQ(function_name(leaf.line(0).function_id()), "inner");
  EXPECT_EQ(leaf.line(0).line(), 10);
  EXPECT_EQ(function_name(leaf.line(1).function_id()), "middle");
  EXPECT_EQ(function_name(leaf.line(2).function_id()), "outer");
  EXPECT_EQ(leaf.line(2).line(), 30);
  const auto caller = location(p.sample(0).location_id(1));
  ASSERT_EQ(caller.line_size(), 1);
  EXPECT_EQ(function_name(caller.line(0).function_id()), "main");

  std::string comm;
  for (const auto& l : p.sample(0).label())
    if (p.string_table(l.key()) == "comm")
      comm = p.string_table(l.str());
  // 0xff and the overlong C0 80 are not UTF-8; the euro sign is.
  EXPECT_EQ(comm,
            "bad???"
            "comm\xe2\x82\xac");
}

// Like perf script --inline: an inlined function has no offset of its own.
TEST(ScriptWriter, InlinedFramesSayInlinedWhereTheModuleGoes) {
  std::ostringstream out;
  write_script_frames(out, inlined_stack());
  EXPECT_EQ(out.str(),
            "\t            1234 inner (inlined)\n"
            "\t            1234 middle (inlined)\n"
            "\t            1234 outer+0x34 (/bin/app)\n"
            "\t            1100 main+0x10 (/bin/app)\n"
            "\n");
}

// A profile of `total` samples: `hot` of them in f(), the rest in g().
std::vector<SymbolizedStack> two_functions(uint64_t total, uint64_t hot) {
  Frame f{"f", "app", false, true, 0x1010, 0x10, "/bin/app", "f"};
  Frame g{"g", "app", false, true, 0x2010, 0x10, "/bin/app", "g"};
  Frame main_fn{"main", "app", false, true, 0x3010, 0x10, "/bin/app", "main"};
  return {{1, 1, 0, "app", hot, {f, main_fn}}, {1, 1, 0, "app", total - hot, {g, main_fn}}};
}

Profile with_samples(uint64_t total, double seconds) {
  Profile p;
  p.info.event = "cpu-clock";
  p.info.sample_frequency = 99;
  p.info.cpu_count = 2;
  p.total_samples = p.recorded_samples = total;
  p.end = format::RecordingEnd{static_cast<uint64_t>(seconds * 1e9)};
  return p;
}

// The top lines of a diff, without its header.
std::string diff_top(const std::vector<SymbolizedStack>& base,
                     const std::vector<SymbolizedStack>& now, uint64_t base_total,
                     uint64_t new_total, Normalize n) {
  std::vector<Profile> b, w;
  b.push_back(with_samples(base_total, 10));
  w.push_back(with_samples(new_total, 10));
  std::ostringstream out;
  write_diff_top(out, b[0], w[0], join_stacks(base, now, Join::kSymbol),
                 {sample_value(b, base_total, n), sample_value(w, new_total, n)}, n, 0);
  return out.str();
}

TEST(Diff, ARecordingAgainstItselfIsAllZeros) {
  auto stacks = two_functions(100, 30);
  std::string top = diff_top(stacks, stacks, 100, 100, Normalize::kTotal);
  EXPECT_NE(top.find("30.00        30.00        +0.00  app                      f"),
            std::string::npos)
      << top;
  EXPECT_NE(top.find("70.00        70.00        +0.00  app                      g"),
            std::string::npos)
      << top;
  EXPECT_EQ(top.find("appeared"), std::string::npos) << top;
  std::ostringstream folded;
  write_diff_folded(folded, join_stacks(stacks, stacks, Join::kAddress), {0.01, 0.01});
  EXPECT_EQ(folded.str(), "app;main;f 30 30\napp;main;g 70 70\n");
}

// f goes from 30% of 200 samples to 60% of 50: normalised by each total,
// exactly +30 points, and in the new recording's units the base had 15.
TEST(Diff, AShareMovingFrom30To60PercentShowsThatDelta) {
  auto base = two_functions(200, 60), now = two_functions(50, 30);
  std::string top = diff_top(base, now, 200, 50, Normalize::kTotal);
  EXPECT_NE(top.find("30.00        60.00       +30.00  app                      f"),
            std::string::npos)
      << top;
  EXPECT_NE(top.find("70.00        40.00       -30.00  app                      g"),
            std::string::npos)
      << top;
  // Sorted by the size of the change; f first (a tie is broken by name).
  EXPECT_LT(top.find(" f\n"), top.find(" g\n"));
  std::ostringstream folded;
  write_diff_folded(folded, join_stacks(base, now, Join::kSymbol), {100.0 / 200, 100.0 / 50});
  EXPECT_EQ(folded.str(), "app;main;f 15 30\napp;main;g 35 20\n");
  // Without normalisation the raw samples are compared.
  std::string raw = diff_top(base, now, 200, 50, Normalize::kNone);
  EXPECT_NE(raw.find("60.00        30.00       -30.00  app                      f"),
            std::string::npos)
      << raw;
}

TEST(Diff, FunctionsThatAppearOrVanishHaveTheirOwnSections) {
  Frame h{"h", "app", false, true, 0x4010, 0x10, "/bin/app", "h"};
  auto base = two_functions(100, 30);
  auto now = two_functions(100, 30);
  now.push_back({1, 1, 0, "app", 10, {h}});
  base.pop_back();  // g vanished... from the base: it appears in the new one
  std::string top = diff_top(base, now, 100, 110, Normalize::kNone);
  const size_t appeared = top.find("# appeared");
  ASSERT_NE(appeared, std::string::npos) << top;
  // Both after the heading, none before it.
  EXPECT_NE(top.find(" g\n", appeared), std::string::npos) << top;
  EXPECT_NE(top.find(" h\n", appeared), std::string::npos) << top;
  EXPECT_GT(top.find(" g\n"), appeared) << top;
  EXPECT_GT(top.find(" h\n"), appeared) << top;
  std::string vanished = diff_top(now, base, 110, 100, Normalize::kNone);
  EXPECT_NE(vanished.find("# vanished"), std::string::npos) << vanished;
}

// Rebuilt code moves: a name join still matches, an address join does not.
TEST(Diff, JoinsBySymbolOrByBuildIdAndOffset) {
  auto base = two_functions(100, 30), now = two_functions(100, 30);
  std::vector<Frame> moved(now[0].frames.begin(), now[0].frames.end());
  moved[0].build_id = "\x01";
  moved[0].file_offset = 0x99;
  now[0].frames = moved;
  EXPECT_EQ(join_stacks(base, now, Join::kSymbol).size(), 2u);
  EXPECT_EQ(join_stacks(base, now, Join::kAddress).size(), 3u);
}

TEST(Diff, PprofHoldsNewMinusBase) {
  auto base = two_functions(200, 60), now = two_functions(50, 30);
  Profile header = with_samples(50, 10);
  std::ostringstream out;
  write_pprof_diff(out, header, base, 0.25, now);
  perftools::profiles::Profile p = decode_pprof(out.str());
  auto by_leaf = [](const perftools::profiles::Profile& profile, int value) {
    std::map<std::string, int64_t> sums;
    for (const auto& s : profile.sample())
      for (const auto& l : profile.location())
        if (l.id() == s.location_id(0))
          for (const auto& f : profile.function())
            if (f.id() == l.line(0).function_id())
              sums[profile.string_table(f.name())] += s.value(value);
    return sums;
  };
  EXPECT_EQ(by_leaf(p, 0)["f"], 30 - 15);
  EXPECT_EQ(by_leaf(p, 0)["g"], 20 - 35);

  // A base sample worth a tenth of a new one: whole samples round it away,
  // its time (1/99 s per sample at 99 Hz) keeps it.
  Frame h{"h", "app", false, true, 0x4010, 0x10, "/bin/app", "h"};
  std::vector<SymbolizedStack> tail{{1, 1, 0, "app", 1, {h}}};
  std::ostringstream tenth;
  write_pprof_diff(tenth, header, tail, 0.1, {});
  perftools::profiles::Profile t = decode_pprof(tenth.str());
  EXPECT_EQ(by_leaf(t, 0)["h"], 0);
  EXPECT_EQ(by_leaf(t, 1)["h"], -std::llround(0.1 * 1e9 / 99));
}

TEST(Merge, KeepsEachRecordingAsASourceAndEmbedsSymbolsOnce) {
  const std::string a = write_small_recording("merge-a.data");
  const std::string b = write_small_recording("merge-b.data");
  const std::string merged = testing::TempDir() + "/merged.data";
  MergeResult r = merge_recordings(merged, {a, b});
  EXPECT_EQ(r.sources, 2u);
  EXPECT_EQ(r.samples, 4u);
  EXPECT_TRUE(r.warnings.empty());
  std::vector<Profile> sources = load_profiles(merged);
  ASSERT_EQ(sources.size(), 2u);
  for (const Profile& p : sources) {
    EXPECT_EQ(p.total_samples, 2u);
    EXPECT_EQ(p.info.hostname, "box");
    EXPECT_EQ(p.processes.at(7).size(), 1u);
    EXPECT_TRUE(p.end);
    EXPECT_EQ(p.embedded_symbols->at("\xab\xcd").symbols().size(), 1u);
  }
  EXPECT_EQ(sources[0].source.path, a);
  EXPECT_EQ(sources[1].source.path, b);
  EXPECT_EQ(sources[1].source.index, 1u);
  EXPECT_THROW(load_profile(merged), Error);

  // The same symbols twice are written once.
  std::ostringstream dump;
  write_dump(dump, merged);
  const std::string text = dump.str();
  size_t tables = 0;
  for (size_t at = text.find("elf-symbols"); at != std::string::npos;
       at = text.find("elf-symbols", at + 1))
    ++tables;
  EXPECT_EQ(tables, 1u) << text;

  // A merged file merges again: its sources stay sources.
  const std::string twice = testing::TempDir() + "/merged-twice.data";
  EXPECT_EQ(merge_recordings(twice, {merged, a}).sources, 3u);
  EXPECT_EQ(load_profiles(twice).size(), 3u);
  EXPECT_THROW(merge_recordings(twice, {a, testing::TempDir() + "/missing.data"}), Error);
  EXPECT_EQ(load_profiles(twice).size(), 3u) << "a failed merge keeps the file it would replace";
  EXPECT_FALSE(std::filesystem::exists(twice + ".partial"));
}

TEST(FlameGraph, TreeSumsStacksAndThePageEscapesNames) {
  Frame evil{"</script><script>alert(1)</script>", "app", false, true};
  Frame k{"irq_exit", "[kernel.kallsyms]", true, true};
  std::vector<SymbolizedStack> stacks = two_functions(100, 30);
  stacks.push_back({1, 1, 0, "app", 5, {k, evil}});
  std::vector<FlameNode> tree = build_flame_tree(flame_stacks(stacks));
  EXPECT_EQ(tree[0].name, "all");
  EXPECT_EQ(tree[0].value, 105);
  ASSERT_EQ(tree[0].children.size(), 1u);
  const FlameNode& comm = tree[tree[0].children[0]];
  EXPECT_EQ(comm.kind, FlameKind::kComm);
  EXPECT_EQ(comm.value, 105);
  std::ostringstream html, svg;
  write_flamegraph_html(html, flame_stacks(stacks), {"t<i>tle"});
  EXPECT_EQ(html.str().find("</script><script>alert"), std::string::npos);
  EXPECT_NE(html.str().find("\\u003c/script\\u003e"), std::string::npos);
  EXPECT_NE(html.str().find("<title>t&lt;i&gt;tle</title>"), std::string::npos);
  write_flamegraph_svg(svg, flame_stacks(stacks), {"t"});
  EXPECT_TRUE(svg.str().starts_with("<?xml")) << svg.str();
  EXPECT_NE(svg.str().find(">main<"), std::string::npos) << svg.str();
  EXPECT_NE(svg.str().find("&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(svg.str().find("<script>"), std::string::npos);
}

// 100k distinct stacks: the page draws frames narrower than a pixel as one
// block, so a browser shows it with a bounded number of elements. The page
// is kept as a test artifact (bench/flamegraph.sh times loading it).
TEST(FlameGraph, AHundredThousandStacksDrawABoundedPage) {
  std::vector<SymbolizedStack> stacks;
  Frame main_fn{"main", "app", false, true};
  for (int i = 0; i < 100000; ++i) {
    std::vector<Frame> frames;
    for (int level = 0, rest = i; level < 5; ++level, rest /= 10)
      frames.insert(frames.begin(),
                    Frame{"fn_" + std::to_string(level) + "_" + std::to_string(rest % 10), "app",
                          false, true});
    frames.push_back(main_fn);
    stacks.push_back({1, 1, 0, "app", static_cast<uint64_t>(i % 7 + 1), std::move(frames)});
  }
  EXPECT_EQ(build_flame_tree(flame_stacks(stacks)).size(),
            2u + 1 + 10 + 100 + 1000 + 10000 + 100000);
  std::filesystem::create_directories(EBPROF_ARTIFACTS);
  const std::string page = std::string(EBPROF_ARTIFACTS) + "/flame-100k.html";
  {
    std::ofstream out(page);
    write_flamegraph_html(out, flame_stacks(stacks), {"100k stacks"});
  }
  if (system("command -v chromium >/dev/null") != 0)
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium): page not loaded";
  const std::string dom = testing::TempDir() + "/flame-100k.dom";
  const std::string log = testing::TempDir() + "/flame-100k.log";
  ASSERT_EQ(
      system(
          (headless_chromium() + "--dump-dom 'file://" + page + "' >" + dom + " 2>" + log).c_str()),
      0);
  std::ifstream in(dom);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  std::ifstream errors(log);
  const std::string err((std::istreambuf_iterator<char>(errors)), {});
  EXPECT_EQ(err.find(":CONSOLE"), std::string::npos) << err;
  EXPECT_NE(text.find(">all</div>"), std::string::npos);
  size_t frames = 0;
  for (size_t at = text.find("class=\"f"); at != std::string::npos;
       at = text.find("class=\"f", at + 1))
    ++frames;
  EXPECT_GT(frames, 1000u);
  EXPECT_LT(frames, 20000u) << "frames narrower than a pixel must not each become an element";
}

// Offsets of the frames of `kind` in the recording at `path`.
std::vector<uint64_t> frames_of(const std::string& path, const std::string& kind) {
  struct Finder : format::RecordingVisitor {
    std::string kind;
    std::vector<uint64_t> offsets;
    void on_frame(const format::FrameInfo& f) override {
      if (f.kind == kind)
        offsets.push_back(f.offset);
    }
  } finder;
  finder.kind = kind;
  format::read_recording(path, finder);
  return finder.offsets;
}

// Flips a byte inside the payload of the frame at `offset`: its checksum
// then fails and the reader skips it.
void damage_frame(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset + 20));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(offset + 20));
  f.write(&c, 1);
}

std::string script_of(const std::string& path) {
  std::ostringstream out;
  SymbolizeOptions embedded_only;
  embedded_only.sources.symfs = "/nonexistent-symfs";
  write_script(out, path, load_profiles(path), {}, {}, embedded_only);
  return out.str();
}

// A lost Source frame must not run two recordings together: the next
// header starts the next source, for the profiles and for script alike.
TEST(Merge, ASourceFrameLostToDamageStillSeparatesRecordings) {
  const std::string a = write_small_recording("lost-a.data");
  const std::string b = write_small_recording("lost-b.data");
  const std::string merged = testing::TempDir() + "/lost-source.data";
  merge_recordings(merged, {a, b});
  const std::string whole = script_of(merged);
  EXPECT_EQ(whole, script_of(a) + script_of(b));
  const std::vector<uint64_t> sources = frames_of(merged, "source");
  ASSERT_EQ(sources.size(), 2u);
  damage_frame(merged, sources[1]);
  std::vector<Profile> profiles = load_profiles(merged);
  ASSERT_EQ(profiles.size(), 2u);
  for (const Profile& p : profiles) {
    EXPECT_EQ(p.total_samples, 2u);
    EXPECT_EQ(p.processes.at(7).size(), 1u);
  }
  EXPECT_NE(profiles.back().warning.find("checksum"), std::string::npos) << profiles.back().warning;
  EXPECT_EQ(script_of(merged), whole);
}

// An input read with a damaged frame is merged as the reader recovered it,
// and the merged file reads back the same.
TEST(Merge, ADamagedInputReadsBackAsItWasRecovered) {
  const std::string path = testing::TempDir() + "/two-batches.data";
  {
    auto w = format::RecordingWriter::create(path);
    format::RecordingInfo info;
    info.event = "cpu-clock";
    info.sample_frequency = 99;
    w.write(info);
    format::SampleBatch first;
    first.stacks = {{{}, {0x1004}}};
    first.comms = {"app"};
    first.samples = {{1'500'000'000, 7, 7, 1, 0, 0}};
    w.write(first);
    format::SampleBatch second;
    second.first_stack_id = 1;
    second.first_comm_id = 1;
    second.stacks = {{{}, {0x1008}}};
    second.comms = {"app"};
    second.samples = {{1'600'000'000, 7, 7, 1, 1, 1}, {1'700'000'000, 7, 7, 1, 1, 1}};
    w.write(second);
    w.close();
  }
  damage_frame(path, frames_of(path, "samples").front());
  ASSERT_EQ(load_profile(path).total_samples, 2u);
  const std::string merged = testing::TempDir() + "/two-batches-merged.data";
  MergeResult r = merge_recordings(merged, {path});
  ASSERT_EQ(r.warnings.size(), 1u);
  std::vector<Profile> back = load_profiles(merged);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].total_samples, 2u);
  EXPECT_TRUE(back[0].warning.empty()) << back[0].warning;
  EXPECT_EQ(script_of(merged), script_of(path));
}

// Off CPU in pprof: an off_cpu/nanoseconds type after the others, each
// sample with one value per type; a recording without samples on CPU has
// no cpu type.
TEST(PprofWriter, OffCpuTimeIsATypeOfItsOwn) {
  auto stacks = two_functions(10, 4);
  stacks[1].off_cpu = static_cast<uint8_t>(format::BlockState::kSleeping);
  stacks[1].time_ns = 3'000'000'000;
  for (bool sampling : {true, false}) {
    Profile profile = with_samples(10, 10);
    profile.info.sampling = sampling;
    std::ostringstream out;
    write_pprof(out, profile, stacks);
    perftools::profiles::Profile p = decode_pprof(out.str());
    std::vector<std::string> types;
    for (const auto& t : p.sample_type())
      types.push_back(p.string_table(t.type()));
    const std::vector<std::string> expected =
        sampling ? std::vector<std::string>{"samples", "cpu", "off_cpu"}
                 : std::vector<std::string>{"samples", "off_cpu"};
    EXPECT_EQ(types, expected);
    ASSERT_EQ(p.sample_size(), 2);
    for (const auto& sample : p.sample())
      EXPECT_EQ(sample.value_size(), p.sample_type_size());
    EXPECT_EQ(p.sample(1).value(p.sample_type_size() - 1), 3'000'000'000);
    EXPECT_EQ(p.sample(0).value(p.sample_type_size() - 1), 0);
  }
}

TEST(TopWriter, SortByStateShowsWhereThreadsWaited) {
  Profile profile = with_samples(10, 10);
  auto stacks = two_functions(10, 4);
  stacks[1].off_cpu = static_cast<uint8_t>(format::BlockState::kUninterruptible);
  std::ostringstream out;
  write_top(out, profile, stacks, {.rows = 0, .sort = parse_sort_keys("state")});
  EXPECT_NE(out.str().find("40.00%         4  on CPU"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("60.00%         6  D uninterruptible"), std::string::npos) << out.str();
}

// Time-weighted diff: shares of each side's own total time.
TEST(Diff, TimeWeightedSharesAreOfEachSidesTime) {
  auto base = two_functions(100, 30), now = two_functions(100, 30);
  // Counted in microseconds: f takes 600 of base's 1000 us, 900 of new's 1000.
  base[0].count = 600, base[1].count = 400, now[0].count = 900, now[1].count = 100;
  std::vector<Profile> b{with_samples(100, 10)}, w{with_samples(100, 10)};
  std::ostringstream out;
  write_diff_top(
      out, b[0], w[0], join_stacks(base, now, Join::kSymbol),
      {sample_value(b, 1000, Normalize::kTotal), sample_value(w, 1000, Normalize::kTotal)},
      Normalize::kTotal, 0, "us");
  EXPECT_NE(out.str().find("60.00        90.00       +30.00  app                      f"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("self us of each function"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace ebprof::report
