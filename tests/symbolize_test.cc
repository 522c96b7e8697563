// The symbolize stage: finding a recorded binary's files and naming its
// addresses (ELF symbols, DWARF inline frames, JIT maps, demangling), and
// kernel addresses from the recorded kallsyms.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include "common/elf_file.h"
#include "common/error.h"
#include "common/text.h"
#include "record/proc_maps.h"
#include "report/locate/debuginfod.h"
#include "report/locate/file_finder.h"
#include "report/symbolize/demangle.h"
#include "report/symbolize/kernel_names.h"
#include "report/symbolize/user_names.h"
#include "workloads/demo_lib.h"

extern "C" __attribute__((noinline)) int ebprof_test_marker(int x) {
  return x * 3 + 1;
}

namespace ebprof::report {
namespace {

uint64_t address_of(auto* fn) {
  return reinterpret_cast<uint64_t>(fn);
}

// What a report names user addresses with.
struct Names {
  explicit Names(SymbolizeOptions o = {})
      : options(std::move(o)), files(options), user(options, files) {}

  Frame one(std::span<const format::ProcessInfo> captures, uint64_t address,
            const std::vector<ElfSymbol>* jit = nullptr) {
    return user.name_one({captures, jit, &embedded}, address, address);
  }
  std::vector<Frame> all(std::span<const format::ProcessInfo> captures, uint64_t address) {
    std::vector<Frame> out;
    user.name({captures, nullptr, &embedded}, address, address, out);
    return out;
  }

  SymbolizeOptions options;
  EmbeddedTables embedded;
  FileFinder files;
  UserNames user;
};

TEST(Demangle, CppNamesBecomeReadableOthersStay) {
  EXPECT_EQ(demangle("_ZN4demo8hot_leafEm"), "demo::hot_leaf(unsigned long)");
  EXPECT_EQ(demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"),
            "std::vector<int, std::allocator<int> >::push_back(int const&)");
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle("_Z"), "_Z");
  EXPECT_EQ(demangle("_Znotvalid!"), "_Znotvalid!");
}

// The live mappings of this (PIE) test process, which loads libebprof_demo.so
// at a random base: naming through them exercises load bias for both.
format::ProcessInfo self() {
  record::ElfIdentities identities;
  return record::read_process(static_cast<uint32_t>(getpid()), 0, identities);
}

TEST(UserNames, NamesFunctionsInAPieAndASharedLibrary) {
  Names names;
  auto p = self();
  uint64_t lib_fn = address_of(&demo::hot_leaf);
  Frame f = names.one({&p, 1}, lib_fn + 4);
  EXPECT_EQ(f.name, "demo::hot_leaf(unsigned long)");
  EXPECT_EQ(f.module, "libebprof_demo.so");
  EXPECT_TRUE(f.named());

  uint64_t exe_fn = address_of(&ebprof_test_marker);
  f = names.one({&p, 1}, exe_fn);
  EXPECT_EQ(f.name, "ebprof_test_marker");
  EXPECT_EQ(f.kind, FrameKind::kNative);
}

TEST(UserNames, NeverGuessesANameForUnknownCode) {
  Names names;
  void* anon = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(anon, MAP_FAILED);
  auto with_anon = self();
  Frame f = names.one({&with_anon, 1}, address_of(anon) + 16);
  EXPECT_EQ(f.reason, UnnamedReason::kJitMapMissing);
  EXPECT_EQ(f.kind, FrameKind::kJit);
  EXPECT_EQ(f.offset, 16u);
  munmap(anon, 4096);

  auto p = self();
  EXPECT_EQ(names.one({&p, 1}, 0x10).reason, UnnamedReason::kNoMapping);
  EXPECT_EQ(names.one({}, 0x1234).reason, UnnamedReason::kMapsNotRecorded);

  // A binary that is gone from disk: module and offset, no name.
  format::ProcessInfo moved{1, "x", 0, {{0x400000, 0x500000, 0x1000, "/nonexistent/bin/app"}}, ""};
  f = names.one({&moved, 1}, 0x400010);
  EXPECT_EQ(f.reason, UnnamedReason::kBinaryNotFound);
  EXPECT_EQ(f.module, "app");
  EXPECT_EQ(f.file_offset, 0x1010u);
}

TEST(UserNames, NamesJitCodeFromTheProcesssPerfMap) {
  const std::vector<ElfSymbol> jit = {{0x7000, 0x10, "jitted_a"}, {0x7010, 0x20, "_ZN2js4callEv"}};
  Names names;
  format::ProcessInfo p{7, "x", 0, {{0x7000, 0x8000, 0, ""}}, ""};
  Frame f = names.one({&p, 1}, 0x7014, &jit);
  EXPECT_EQ(f.name, "js::call()");  // demangled, like any other name
  EXPECT_EQ(f.module, "perf-7.map");
  EXPECT_EQ(f.kind, FrameKind::kJit);
  EXPECT_TRUE(f.named());
  // Past the last symbol's end: not named, and the reason says why.
  EXPECT_EQ(names.one({&p, 1}, 0x7040, &jit).reason, UnnamedReason::kJitMapMissing);
  // A process without a perf map: its code is never named by another's.
  EXPECT_FALSE(names.one({&p, 1}, 0x7014).named());
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
TEST(UserNames, NamesAStrippedBinaryFromItsDebuginfo) {
  const std::string dir = EBPROF_STRIPPED_DIR;
  const std::string stripped = dir + "/hotcold";
  ASSERT_FALSE(ElfSymbolTable::load(stripped).complete());
  const uint64_t main_vaddr = vaddr_of(dir + "/hotcold.debug", "main");
  const uint64_t in_main = 0x555500000000 + main_vaddr + 1;

  // By debuglink: hotcold.debug sits next to the binary.
  format::ProcessInfo p = mapped(stripped, main_vaddr, stripped);
  EXPECT_EQ(Names().one({&p, 1}, in_main).name, "main");

  // Alone, it says why.
  const std::string alone = testing::TempDir() + "/alone";
  std::filesystem::create_directories(alone);
  std::filesystem::copy_file(stripped, alone + "/hotcold",
                             std::filesystem::copy_options::overwrite_existing);
  p = mapped(alone + "/hotcold", main_vaddr, alone + "/hotcold");
  SymbolizeOptions nowhere;
  nowhere.sources.debug_dirs = {testing::TempDir() + "/no-debug-here"};
  Frame f = Names(nowhere).one({&p, 1}, in_main);
  EXPECT_EQ(f.reason, UnnamedReason::kStripped);
  EXPECT_EQ(f.module, "hotcold");

  // By build-id, under a debug directory; every place looked is recorded.
  const std::string debug_dir = testing::TempDir() + "/debug";
  const std::string id = hex_bytes(ElfSymbolTable::load(stripped).identity().build_id);
  const std::string by_id =
      debug_dir + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  std::filesystem::create_directories(std::filesystem::path(by_id).parent_path());
  std::filesystem::copy_file(dir + "/hotcold.debug", by_id,
                             std::filesystem::copy_options::overwrite_existing);
  SymbolizeOptions by_build_id;
  by_build_id.sources.debug_dirs = {debug_dir};
  Names names(by_build_id);
  EXPECT_EQ(names.one({&p, 1}, in_main).name, "main");
  const FoundBinary& found = names.files.find(p.mappings[0], names.embedded);
  ASSERT_EQ(found.attempts.size(), 2u);
  EXPECT_EQ(found.attempts[0].source, FileAttempt::Source::kBinary);
  EXPECT_EQ(found.attempts[0].outcome, FileAttempt::Outcome::kMatches);
  EXPECT_EQ(found.attempts[1].path, by_id);
  EXPECT_EQ(found.attempts[1].outcome, FileAttempt::Outcome::kMatches);
}

// DEBUGINFOD_URLS: debuginfo found nowhere locally comes from a server, here
// a real debuginfod serving the stripped binary's debuginfo on localhost.
TEST(UserNames, FetchesDebuginfoFromDebuginfod) {
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
    std::shared_ptr<Debuginfod> client = Debuginfod::from_environment({});
    ASSERT_TRUE(client);
    o.debuginfod = [client](const std::string& id) { return client->find_debuginfo(id); };
    name = Names(o).one({&p, 1}, in_main).name;
    if (name != "main")
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  kill(server, SIGTERM);
  waitpid(server, nullptr, 0);
  unsetenv("DEBUGINFOD_URLS");
  unsetenv("DEBUGINFOD_CACHE_PATH");
  EXPECT_EQ(name, "main");
}

// A server that accepts and never answers holds the report for the
// deadline at most, however many build-ids are asked (in parallel), says
// so while it waits, and sums up what went unanswered.
TEST(Debuginfod, ASilentServerCostsTheDeadlineAtMost) {
  if (system("test -e /usr/lib/x86_64-linux-gnu/libdebuginfod.so.1 || "
             "ldconfig -p | grep -q libdebuginfod.so.1") != 0)
    GTEST_SKIP() << "libdebuginfod is not installed (apt-get install libdebuginfod1)";
  // Listening, never accepting: connections complete, requests never end.
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(listener, 64), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string cache = testing::TempDir() + "/silent-cache-" + std::to_string(getpid());
  setenv("DEBUGINFOD_URLS", ("http://127.0.0.1:" + std::to_string(ntohs(address.sin_port))).c_str(),
         1);
  setenv("DEBUGINFOD_CACHE_PATH", cache.c_str(), 1);
  std::vector<std::string> said;
  const auto start = std::chrono::steady_clock::now();
  std::string summary;
  {
    std::unique_ptr<Debuginfod> client = Debuginfod::from_environment(
        {.deadline_s = 3, .say = [&](const std::string& m) { said.push_back(m); }});
    ASSERT_TRUE(client);
    const std::vector<std::string> ids = {std::string(20, 'a'), std::string(20, 'b'),
                                          std::string(20, 'c'), std::string(20, 'd'),
                                          std::string(20, 'e'), std::string(20, 'f')};
    for (const std::string& id : ids)
      client->request(id);
    for (const std::string& id : ids)
      EXPECT_EQ(client->find_debuginfo(id), "");
    summary = client->summary();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  unsetenv("DEBUGINFOD_URLS");
  unsetenv("DEBUGINFOD_CACHE_PATH");
  close(listener);
  std::filesystem::remove_all(cache);
  EXPECT_LT(seconds, 8) << "one deadline for all, not one per question";
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("--debuginfod-timeout"), std::string::npos) << said[0];
  EXPECT_NE(summary.find("6 build-ids asked, 0 found, 6 unanswered"), std::string::npos) << summary;
}

// A recording of thousands of binaries nobody has debuginfo for must not
// mean thousands of slow server round trips: at most 200 per report, and
// never for a binary that has it locally or has no build-id.
TEST(UserNames, AsksDebuginfodAtMost200Times) {
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
  Names names(o);
  for (const format::Mapping& m : p.mappings) {
    EXPECT_EQ(names.one({&p, 1}, m.start + 0x10).reason, UnnamedReason::kBinaryNotFound) << m.path;
    names.one({&p, 1}, m.start + 0x20);  // the same binary: no new query
  }
  EXPECT_EQ(queries, 200);
}

// --symfs: the recorded path is looked up under another root; a file there
// with another build-id is never used, and said so once.
TEST(UserNames, SymfsAndAWarningPerMismatchedBinary) {
  const std::string symfs = testing::TempDir() + "/symfs";
  std::filesystem::create_directories(symfs + "/opt/app");
  std::filesystem::copy_file(EBPROF_HOTCOLD_BIN, symfs + "/opt/app/hotcold",
                             std::filesystem::copy_options::overwrite_existing);
  const uint64_t main_vaddr = vaddr_of(EBPROF_HOTCOLD_BIN, "main");
  const uint64_t in_main = 0x555500000000 + main_vaddr + 1;
  format::ProcessInfo p = mapped(EBPROF_HOTCOLD_BIN, main_vaddr, "/opt/app/hotcold");
  SymbolizeOptions o;
  o.sources.symfs = symfs;
  EXPECT_EQ(Names(o).one({&p, 1}, in_main).name, "main");

  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  p.mappings[0].build_id = "\x01\x02";  // recorded from another build
  Names other(o);
  EXPECT_EQ(other.one({&p, 1}, in_main).reason, UnnamedReason::kBuildIdMismatch);
  other.one({&p, 1}, in_main + 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("recorded 0102"), std::string::npos) << warnings[0];
  // Named from the tables of several recordings (and looked up ahead of
  // naming, while a recording loads), the binary is looked for once.
  FileFinder files(o);
  const EmbeddedTables first, second;
  files.dwarf_of(p.mappings[0]);
  files.find(p.mappings[0], first);
  files.find(p.mappings[0], second);
  EXPECT_EQ(warnings.size(), 2u) << "one more finder, one more warning, not three";
}

// With DWARF at hand, functions inlined at an address become frames of
// their own, innermost first, each with its file and line.
TEST(UserNames, InlinedFunctionsAreFramesOfTheirOwn) {
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
  Names names(o);
  bool found = false;
  for (uint64_t v = containing->address; v < containing->address + containing->size && !found;
       ++v) {
    const uint64_t at = 0x555500000000 + v;
    std::vector<Frame> frames = names.all({&p, 1}, at);
    if (frames.size() < 3)
      continue;
    found = true;
    EXPECT_EQ(frames[0].kind, FrameKind::kInlined);
    EXPECT_EQ(frames[1].kind, FrameKind::kInlined);
    EXPECT_EQ(frames[2].kind, FrameKind::kNative);
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
    std::vector<Frame> outer = Names(flat).all({&p, 1}, at);
    ASSERT_EQ(outer.size(), 1u);
    EXPECT_EQ(outer[0].name, "fixture::containing(unsigned long)");
    EXPECT_EQ(outer[0].kind, FrameKind::kNative);
  }
  EXPECT_TRUE(found) << "no address of containing() has two inlined frames";
}

TEST(UserNames, NoDemangleKeepsSystemNames) {
  auto p = self();
  uint64_t lib_fn = address_of(&demo::hot_leaf);
  SymbolizeOptions raw;
  raw.demangle = false;
  EXPECT_EQ(Names(raw).one({&p, 1}, lib_fn + 4).name, "_ZN4demo8hot_leafEm");
}

TEST(UserNames, NeverOpensAFifoOrDeviceNamedByARecording) {
  std::string fifo = testing::TempDir() + "/not-a-binary.fifo";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Names names;
  for (const std::string& path : {fifo, std::string("/dev/null")}) {
    format::ProcessInfo p{1, "x", 0, {{0x400000, 0x500000, 0, path}}, ""};
    EXPECT_FALSE(names.one({&p, 1}, 0x400010).named()) << path;  // would block forever on open()
  }
  unlink(fifo.c_str());
}

TEST(UserNames, CodeMappedAfterACaptureIsFoundInALaterOne) {
  Names names;
  uint64_t exe_fn = address_of(&ebprof_test_marker);
  format::ProcessInfo early{1, "x", 0, {}, ""};  // e.g. read while ld.so was still mapping
  std::vector<format::ProcessInfo> captures = {early, self()};
  EXPECT_EQ(names.one(captures, exe_fn).name, "ebprof_test_marker");
  // The capture in effect wins over a later one that maps the range elsewhere.
  format::ProcessInfo other{1, "x", 0, {{exe_fn - 0x10, exe_fn + 0x10, 0, "/nonexistent/b"}}, ""};
  std::vector<format::ProcessInfo> reused = {self(), other};
  EXPECT_EQ(names.one(reused, exe_fn).name, "ebprof_test_marker");
  format::ProcessInfo gone{1, "x", 0, {}, std::string(format::kMapsErrorExited)};
  EXPECT_EQ(names.one({&gone, 1}, 0x10).reason, UnnamedReason::kExitedBeforeMapsRead);
  gone.maps_error = "cannot read /proc/1/maps: Permission denied";
  EXPECT_EQ(names.one({&gone, 1}, 0x10).reason, UnnamedReason::kMapsUnreadable);
}

// A binary at the recorded path that is not the one that ran (rebuilt,
// upgraded, another machine's) must never lend its names. The recorder
// could not read the file's build-id (the process exited first): the file
// now at the path cannot be verified, so it is not used.
TEST(UserNames, AFileTheRecordingCouldNotIdentifyIsNotUsed) {
  Names names;
  auto p = self();
  for (auto& m : p.mappings)
    m.build_id.clear();
  EXPECT_EQ(names.one({&p, 1}, address_of(&ebprof_test_marker)).reason,
            UnnamedReason::kBuildIdMismatch);
}

TEST(UserNames, ABinaryWithAnotherBuildIdIsNeverUsed) {
  Names names;
  auto p = self();
  for (auto& m : p.mappings)
    if (!m.build_id.empty())
      m.build_id[0] ^= 0xff;
  EXPECT_EQ(names.one({&p, 1}, address_of(&ebprof_test_marker)).reason,
            UnnamedReason::kBuildIdMismatch);
}

// Another machine, or the binary deleted since: the recording's own table
// names the frame, found by the mapping's build-id.
TEST(UserNames, AnEmbeddedTableNamesFramesOfAMissingBinary) {
  Names names;
  names.embedded.try_emplace("\x01\x02", ElfIdentity{"\x01\x02", ""},
                             std::vector<LoadSegment>{{0x1000, 0x401000, 0x2000}},
                             std::vector<ElfSymbol>{{0x401100, 0x80, "_ZN3app4workEv"}});
  format::Mapping m{0x7f0000001000, 0x7f0000003000, 0x1000, "/gone/app", "\x01\x02", ""};
  format::ProcessInfo p{1, "app", 0, {m}, ""};
  // file offset 0x1000 + 0x120 -> vaddr 0x401120, inside app::work().
  Frame f = names.one({&p, 1}, 0x7f0000001120);
  EXPECT_EQ(f.name, "app::work()");
  EXPECT_TRUE(f.named());
  p.mappings[0].path = "/gone/app (deleted)";  // deleted: the embedded table still names it
  EXPECT_EQ(names.one({&p, 1}, 0x7f0000001120).name, "app::work()");
  p.mappings[0].path = "/gone/app";
  p.mappings[0].build_id = "\x03";  // no table for this build: unnamed, with why
  EXPECT_EQ(names.one({&p, 1}, 0x7f0000001120).reason, UnnamedReason::kBinaryNotFound);
}

// Of the names one address has, the one people grep for, as perf chooses
// it: the largest, then global over weak over local, a current version
// over an old one, then the fewest leading underscores.
TEST(ElfSymbolTable, AnAddressIsNamedByItsBestKnownName) {
  using B = ElfSymbol::Binding;
  const ElfSymbolTable table(ElfIdentity{}, {},
                             {{0x1000, 0x40, "__GI___libc_malloc", B::kLocal},
                              {0x1000, 0x40, "__malloc", B::kLocal},
                              {0x1000, 0x40, "__libc_malloc", B::kGlobal},
                              {0x1000, 0x40, "malloc", B::kGlobal},
                              {0x2000, 0x20, "__GI___nanosleep", B::kLocal},
                              {0x2000, 0x20, "nanosleep", B::kWeak},
                              {0x2000, 0x20, "__nanosleep", B::kGlobal},
                              {0x3000, 0x10, "__libc_read", B::kLocal},
                              {0x3000, 0x10, "__read", B::kGlobal},
                              {0x3000, 0x10, "read", B::kGlobal},
                              {0x4000, 0, "sized_nothing", B::kGlobal},
                              {0x4000, 0x8, "__local_but_sized", B::kLocal},
                              {0x5000, 0x8, "cfree", B::kGlobal, true},
                              {0x5000, 0x8, "free", B::kGlobal}});
  auto name = [&](uint64_t a) {
    const ElfSymbol* s = find_symbol(table.symbols(), a);
    return s ? s->name : "";
  };
  EXPECT_EQ(name(0x1010), "malloc");
  EXPECT_EQ(name(0x2010), "__nanosleep") << "global over weak";
  EXPECT_EQ(name(0x3008), "read");
  EXPECT_EQ(name(0x4004), "__local_but_sized") << "a size of 0 says nothing";
  EXPECT_EQ(name(0x5004), "free") << "cfree@GLIBC_2.2.5 is an old alias";
}

// The same on a real libc, in its debuginfo (where versioned aliases are
// spelled out, clock_nanosleep@GLIBC_2.2.5) and in the binary's .dynsym.
TEST(ElfSymbolTable, LibcFunctionsAreNamedAsPerfNamesThem) {
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  if (!std::filesystem::exists(libc))
    GTEST_SKIP() << libc << " is not there (not Debian on x86-64)";
  const ElfSymbolTable binary = ElfSymbolTable::load(libc);
  std::vector<const ElfSymbolTable*> tables = {&binary};
  std::optional<ElfSymbolTable> debug;
  const std::string id = hex_bytes(binary.identity().build_id);
  const std::string debug_path =
      "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  if (std::filesystem::exists(debug_path))
    tables.push_back(&debug.emplace(ElfSymbolTable::load(debug_path)));
  for (const ElfSymbolTable* t : tables) {
    SCOPED_TRACE(t == &binary ? libc : debug_path);
    std::map<std::string, uint64_t> address;
    for (const ElfSymbol& s : t->symbols()) {
      EXPECT_EQ(s.name.find('@'), std::string::npos) << s.name;
      address[s.name] = s.address;
    }
    for (const char* fn : {"malloc", "free", "read", "write", "clock_nanosleep"})
      EXPECT_TRUE(address.contains(fn)) << fn << " is named otherwise";
    EXPECT_FALSE(address.contains("__GI___libc_malloc"));
  }
}

TEST(ElfSymbolTable, MissingOrForeignFilesAreErrors) {
  EXPECT_THROW(ElfSymbolTable::load("/nonexistent/file"), Error);
  EXPECT_THROW(ElfSymbolTable::load("/proc/self/status"), Error);
}

TEST(KernelNames, NamesByRangeAndShowsModules) {
  const std::vector<format::KernelSymbol> symbols = {
      {0xffffffff81000000, "_stext", "", 0x100},
      {0xffffffff81000100, "schedule", "", 0x100},
      {0xffffffffc0001000, "ext4_read", "ext4", 0x800}};
  auto name = [&](uint64_t a) { return name_kernel_address(symbols, false, a, a); };
  EXPECT_EQ(name(0xffffffff81000150).name, "schedule");
  EXPECT_EQ(name(0xffffffff81000150).module, "[kernel.kallsyms]");
  EXPECT_EQ(name(0xffffffff81000150).offset, 0x50u);
  EXPECT_EQ(name(0xffffffff81000010).name, "_stext");
  EXPECT_EQ(name(0xffffffffc0001234).module, "[ext4]");
  EXPECT_EQ(name(0x1000).reason, UnnamedReason::kNoKernelSymbol);
  // Past a symbol's end (a module loaded later, a gap): unnamed, not schedule.
  Frame past = name(0xffffffff81000200);
  EXPECT_EQ(past.reason, UnnamedReason::kNoKernelSymbol);
  EXPECT_EQ(past.name, "schedule");  // what it is past
  EXPECT_EQ(name_kernel_address({}, false, 0xffffffff81000000, 0xffffffff81000000).reason,
            UnnamedReason::kNoKallsyms);
  EXPECT_EQ(name_kernel_address({}, true, 0xffffffff81000000, 0xffffffff81000000).reason,
            UnnamedReason::kKernelAddressesHidden);
}

}  // namespace
}  // namespace ebprof::report
