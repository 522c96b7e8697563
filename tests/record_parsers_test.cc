#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/eh_frame.h"
#include "common/error.h"
#include "common/perf_map.h"
#include "record/elf_identities.h"
#include "record/flight_recorder.h"
#include "record/jit_maps.h"
#include "record/kallsyms.h"
#include "record/perf_events.h"
#include "record/proc_file.h"
#include "record/proc_maps.h"
#include "record/switch_output.h"

extern "C" __attribute__((noinline)) void ebprof_parser_test_marker() {
  asm volatile("");
}

namespace ebprof::record {
namespace {

TEST(Kallsyms, KeepsTextSymbolsSortedWithTheirModules) {
  KernelSymbolIndex syms(
      "ffffffffc0a01000 t ext4_readpage\t[ext4]\n"
      "ffffffff81000000 T _stext\n"
      "ffffffff81e00000 D some_data\n"
      "ffffffff81000100 W weak_fn\n"
      "garbage line\n"
      "ffffffff81000080 t local_fn");  // no trailing newline
  ASSERT_EQ(syms.size(), 4u);
  EXPECT_EQ(syms.symbol(0).name, "_stext");
  EXPECT_EQ(syms.symbol(1).address, 0xffffffff81000080u);
  EXPECT_EQ(syms.symbol(2).name, "weak_fn");
  EXPECT_EQ(syms.symbol(3).name, "ext4_readpage");
  EXPECT_EQ(syms.symbol(3).module, "ext4");
  EXPECT_EQ(syms.symbol(0).module, "");
  EXPECT_FALSE(syms.hidden());
  EXPECT_EQ(syms.find("weak_fn")->address, 0xffffffff81000100u);
  EXPECT_FALSE(syms.find("some_data"));
}

// Names are kept in 64 KiB chunks: one that would cross into the next
// starts it.
TEST(Kallsyms, KeepsEveryNameWholeAcrossChunks) {
  std::string text;
  auto name = [](int i) { return "function_with_a_long_name_" + std::to_string(i); };
  for (int i = 0; i < 5000; ++i) {
    char address[17];
    std::snprintf(address, sizeof address, "%016x", 0x1000 + 16 * i);
    text += std::string(address) + " t " + name(i) + "\n";
  }
  KernelSymbolIndex syms(text);
  ASSERT_EQ(syms.size(), 5000u);
  for (int i = 0; i < 5000; ++i)
    ASSERT_EQ(syms.symbol(i).name, name(i));
  EXPECT_EQ(syms.find(name(4321))->address, 0x1000u + 16 * 4321);
}

TEST(Kallsyms, SymbolsEndAtTheNextOneTheirModuleOrEtext) {
  const std::string kallsyms =
      "ffffffff81000000 T _stext\n"
      "ffffffff81000100 T schedule\n"
      "ffffffff81000400 T _etext\n"
      "ffffffff81800000 t after_etext\n"
      "ffffffffc0001000 t ext4_read\t[ext4]\n"
      "ffffffffc0002000 t ext4_last\t[ext4]\n"
      "ffffffffc0100000 t bpf_prog_abc\t[bpf]\n";
  auto modules = parse_proc_modules(
      "ext4 12288 2 jbd2,mbcache, Live 0xffffffffc0001000\n"
      "hidden 4096 0 - Live 0x0000000000000000\n"
      "garbage\n");
  ASSERT_EQ(modules.size(), 2u);
  EXPECT_EQ(modules[0].end, 0xffffffffc0004000u);
  // Hidden by kptr_restrict: the name is kept, with no range.
  EXPECT_EQ(modules[1], (format::KernelModule{"hidden", 0, 0, ""}));
  KernelSymbolIndex syms(kallsyms, modules);
  EXPECT_EQ(syms.symbol(1).size, 0x300u);               // schedule: up to _etext
  EXPECT_EQ(syms.symbol(3).size, kMaxUnboundedSymbol);  // past _etext: capped
  EXPECT_EQ(syms.symbol(4).size, 0x1000u);              // ext4_read: up to ext4_last
  EXPECT_EQ(syms.symbol(5).size, 0x2000u);              // ext4_last: up to the module's end
  EXPECT_EQ(syms.symbol(6).size, kMaxUnboundedSymbol);  // bpf: no range to bound with
}

TEST(Kallsyms, TheIndexHandsOutEachNeededSymbolOnce) {
  KernelSymbolIndex index(
      "0000000000001000 t a\n"
      "0000000000001100 t b\n"
      "0000000000001200 t c\n"
      "0000000000001300 t _etext\n"
      "0000000000009000 t far\n");
  std::vector<format::KernelSymbol> out;
  // The leaf IP 0x1010 is in a; the return address 0x1100 is looked up at
  // 0x10ff, so it needs a as well, not b; 0x5000 is in no symbol.
  std::vector<uint64_t> stack = {0x1010, 0x1100, 0x5000, 0x1250};
  index.take_new(stack, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "a");
  EXPECT_EQ(out[1].name, "c");
  out.clear();
  index.take_new(stack, out);
  EXPECT_TRUE(out.empty());
}

// Lines across the reads' 64 KiB pieces come whole, the last one without
// its newline too.
TEST(ProcFile, ReadsLinesAPieceAtATime) {
  const std::string path = testing::TempDir() + "/lines.txt";
  std::string text;
  for (int i = 0; i < 20000; ++i)
    text += "line " + std::to_string(i) + "\n";
  text += "last";
  std::ofstream(path) << text;
  std::vector<std::string> lines;
  read_proc_lines(path, [&](std::string_view line) { lines.emplace_back(line); });
  ASSERT_EQ(lines.size(), 20001u);
  EXPECT_EQ(lines[12345], "line 12345");
  EXPECT_EQ(lines.back(), "last");
  EXPECT_THROW(read_proc_lines(path + ".missing", [](std::string_view) {}), Error);
}

// The index the report writes for embedded CFI pieces reads back as the
// recorder reads a binary's own; bytes that do not hold what they say are
// no index.
TEST(EhFrame, AnIndexBuiltReadsBackAndBadOnesAreRefused) {
  const std::string hdr = build_eh_frame_hdr(0x2000, 0x2100, {{0x1200, 0x2180}, {0x1000, 0x2140}});
  const auto index = EhFrameIndex::parse(std::as_bytes(std::span(hdr)), 0x2000);
  ASSERT_TRUE(index);
  EXPECT_EQ(index->size(), 2u);
  EXPECT_FALSE(index->find(0xfff));
  EXPECT_EQ(index->find(0x1000)->address, 0x2140u);
  EXPECT_EQ(index->find(0x11ff)->address, 0x2140u);
  EXPECT_EQ(index->find(0x9999)->pc, 0x1200u);
  const std::string cut = hdr.substr(0, hdr.size() - 1);  // its count says two entries
  EXPECT_FALSE(EhFrameIndex::parse(std::as_bytes(std::span(cut)), 0x2000));
  std::string other = hdr;
  other[3] = 0x1b;  // a table encoding it does not read
  EXPECT_FALSE(EhFrameIndex::parse(std::as_bytes(std::span(other)), 0x2000));

  // A CIE, then an FDE pointing back to it, then a length past the end.
  std::string eh(8, '\0');
  eh[0] = 4;                                                // length 4, CIE id 0
  eh += std::string("\x08\0\0\0\x0c\0\0\0\x01\0\0\0", 12);  // length 8, back 12: offset 0
  eh += std::string("\xff\0\0\0\0\0\0\0", 8);
  const auto bytes = std::as_bytes(std::span(eh));
  EXPECT_FALSE(eh_frame_entry(bytes, 0)->cie_offset);
  EXPECT_EQ(eh_frame_entry(bytes, 8)->cie_offset, 0u);
  EXPECT_EQ(eh_frame_entry(bytes, 8)->bytes.size(), 12u);
  EXPECT_FALSE(eh_frame_entry(bytes, 20));
  EXPECT_FALSE(eh_frame_entry(bytes, 1000));
}

TEST(Kallsyms, AllZeroAddressesMeanHidden) {
  EXPECT_TRUE(KernelSymbolIndex("0000000000000000 T _stext\n0000000000000000 t foo\n").hidden());
}

TEST(ProcMaps, KeepsExecutableMappingsWithOffsetsAndPaths) {
  auto maps = parse_proc_maps(
      "55d4c5a00000-55d4c5a01000 r--p 00000000 fd:01 1234    /usr/bin/prog\n"
      "55d4c5a01000-55d4c5a02000 r-xp 00001000 fd:01 1234    /usr/bin/prog\n"
      "7f0000000000-7f0000100000 r-xp 00028000 fd:01 99      /opt/my app/lib x.so\n"
      "7f0000200000-7f0000201000 r-xp 00000000 00:00 0       \n"
      "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0       [vdso]\n"
      "7f0000300000-7f0000301000 r-xp 00000000 fd:01 7       /tmp/gone (deleted)\n"
      "not a maps line\n");
  ASSERT_EQ(maps.size(), 5u);
  EXPECT_EQ(maps[0].start, 0x55d4c5a01000u);
  EXPECT_EQ(maps[0].end, 0x55d4c5a02000u);
  EXPECT_EQ(maps[0].file_offset, 0x1000u);
  EXPECT_EQ(maps[0].path, "/usr/bin/prog");
  EXPECT_EQ(maps[1].path, "/opt/my app/lib x.so");
  EXPECT_EQ(maps[1].file_offset, 0x28000u);
  EXPECT_EQ(maps[2].path, "");
  EXPECT_EQ(maps[3].path, "[vdso]");
  EXPECT_EQ(maps[4].path, "/tmp/gone (deleted)");
}

// The vDSO has no file: it is named from the recorder's own copy when a
// process maps the same image, read through /proc/PID/mem while it lives,
// and judged by where it lies once it is gone (a process of a second is).
TEST(ProcMaps, TheVdsoOfAProcessAliveOrGoneIsTheRecordersOwn) {
  std::ifstream in("/proc/self/maps");
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  format::Mapping vdso;
  for (const format::Mapping& m : parse_proc_maps(text))
    if (m.path == "[vdso]")
      vdso = m;
  ASSERT_EQ(vdso.path, "[vdso]") << text;
  ASSERT_GE(vdso.start, uint64_t{1} << 32) << "a 64-bit process's";
  EXPECT_EQ(mapped_file_paths(static_cast<uint32_t>(getpid()), vdso).size(), 1u) << "alive";
  const uint32_t gone = 0x3fffffff;  // above pid_max: cannot exist
  EXPECT_EQ(mapped_file_paths(gone, vdso).size(), 1u) << "gone, above 4 GiB";
  format::Mapping low = vdso;
  low.start = 0xf7fc0000;
  low.end = low.start + (vdso.end - vdso.start);
  EXPECT_TRUE(mapped_file_paths(gone, low).empty()) << "a 32-bit process's has other bytes";
  format::Mapping other_size = vdso;
  other_size.end += 4096;
  EXPECT_TRUE(mapped_file_paths(gone, other_size).empty());
}

TEST(ProcMaps, ReadsThisProcessAndExplainsAMissingOne) {
  ElfIdentities identities;
  auto self = read_process(static_cast<uint32_t>(getpid()), 1, identities);
  EXPECT_TRUE(self.maps_error.empty());
  // Every mapping of our own executable carries its build-id (Debian links
  // with --build-id).
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe");
  const std::string build_id = read_elf_identity(exe).build_id;
  EXPECT_EQ(build_id.size(), 20u);
  // The layout alone says what the whole symbol table does of the file.
  const ElfLayout layout = read_elf_layout(exe);
  const ElfSymbolTable table = ElfSymbolTable::load(exe);
  EXPECT_EQ(layout.identity, table.identity());
  ASSERT_EQ(layout.segments.size(), table.segments().size());
  for (size_t i = 0; i < layout.segments.size(); ++i)
    EXPECT_EQ(layout.segments[i].vaddr, table.segments()[i].vaddr);
  int exe_mappings = 0;
  for (const auto& m : self.mappings) {
    if (m.path != exe)
      continue;
    ++exe_mappings;
    EXPECT_EQ(m.build_id, build_id);
  }
  EXPECT_GT(exe_mappings, 0);
  EXPECT_FALSE(self.mappings.empty());
  EXPECT_FALSE(self.comm.empty());
  auto gone = read_process(0x3fffffff, 1, identities);  // above pid_max: cannot exist
  EXPECT_TRUE(gone.mappings.empty());
  EXPECT_EQ(gone.maps_error, "process exited before its maps were read");
}

TEST(ProcMaps, AThreadIdResolvesToItsProcess) {
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  std::thread t([&] {
    tid = gettid();
    while (!done)
      std::this_thread::yield();
  });
  while (tid == 0)
    std::this_thread::yield();
  EXPECT_NE(tid.load(), getpid());
  EXPECT_EQ(read_tgid(static_cast<uint32_t>(tid.load())), static_cast<uint32_t>(getpid()));
  EXPECT_EQ(read_tgid(static_cast<uint32_t>(getpid())), static_cast<uint32_t>(getpid()));
  EXPECT_EQ(read_tgid(0x3fffffff), std::nullopt);
  done = true;
  t.join();
}

TEST(Events, PerfNamesAndAliasesAndClearErrors) {
  EXPECT_EQ(find_event("page-faults").config, find_event("faults").config);
  EXPECT_EQ(find_event("cs").name, "cs");
  EXPECT_NE(find_event("cycles").type, find_event("cpu-clock").type);
  try {
    find_event("bogus");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("known events: cpu-clock, task-clock"), std::string::npos);
  }
  EXPECT_THROW(find_event("uprobe:/nonexistent/binary:main"), Error);
  EXPECT_THROW(find_event("uprobe:/bin/sh"), Error);             // no symbol
  EXPECT_THROW(find_event("uprobe:/etc/hostname:main"), Error);  // not ELF
  EXPECT_THROW(find_event("kprobe:"), Error);
  // perf's modifiers: user mode only, the kernel only, both.
  const EventSpec user = find_event("cpu-clock:u");
  EXPECT_EQ(user.kind, EventSpec::Kind::kPerf);
  EXPECT_EQ(user.name, "cpu-clock:u");
  EXPECT_EQ(user.config, find_event("cpu-clock").config);
  EXPECT_TRUE(user.exclude_kernel);
  EXPECT_FALSE(user.exclude_user);
  const EventSpec kernel = find_event("faults:k");
  EXPECT_TRUE(kernel.exclude_user);
  EXPECT_FALSE(kernel.exclude_kernel);
  const EventSpec both = find_event("cycles:uk");
  EXPECT_FALSE(both.exclude_user || both.exclude_kernel);
  EXPECT_THROW(find_event("cpu-clock:x"), Error);
  EXPECT_GT(max_sample_rate(), 0u);
}

TEST(Kernel, BuildIdNoteIsFoundAmongOtherNotes) {
  // A "Linux" note first, then the GNU build-id, as /sys/kernel/notes has.
  std::string notes;
  auto note = [&](std::string name, uint32_t type, std::string desc) {
    uint32_t header[3] = {static_cast<uint32_t>(name.size()), static_cast<uint32_t>(desc.size()),
                          type};
    notes.append(reinterpret_cast<const char*>(header), sizeof header);
    name.resize((name.size() + 3) / 4 * 4, '\0');
    desc.resize((desc.size() + 3) / 4 * 4, '\0');
    notes += name + desc;
  };
  note(std::string("Linux\0", 6), 6, "x");
  note(std::string("GNU\0", 4), 3, "\x85\xc7\xe4\xe2\xed");
  EXPECT_EQ(parse_build_id_note(notes), "\x85\xc7\xe4\xe2\xed");
  EXPECT_EQ(parse_build_id_note(notes.substr(0, 20)), "");  // cut: nothing, no overread
  EXPECT_EQ(parse_build_id_note(""), "");
}

TEST(PerfMap, ParsesWhatJitCompilersWrite) {
  auto symbols = parse_perf_map(
      "7f0000001000 40 LazyCompile:*foo app.js:3\n"
      "0x7f0000000000 0x10 stub\n"
      "garbage\n"
      "7f0000002000 zz bad size\n"
      "7f0000003000 8\n");  // no name
  ASSERT_EQ(symbols.size(), 2u);
  EXPECT_EQ(symbols[0], (ElfSymbol{0x7f0000000000, 0x10, "stub"}));
  EXPECT_EQ(symbols[1], (ElfSymbol{0x7f0000001000, 0x40, "LazyCompile:*foo app.js:3"}));
}

// The perf map is written by the profiled process: a FIFO must not block
// the recorder, and a symlink (to a host file) is not followed.
TEST(PerfMap, OnlyARegularFileOfTheProcessIsRead) {
  const uint32_t pid = static_cast<uint32_t>(getpid());
  const std::string map = "/tmp/perf-" + std::to_string(pid) + ".map";
  const std::string real = testing::TempDir() + "/real.map";
  auto code = reinterpret_cast<uint64_t>(&ebprof_parser_test_marker);
  std::ofstream(real) << std::hex << code << " 10 marked\n";
  uint64_t now = 1'000'000'000;
  auto step = [&] { return now += JitMaps::kRereadIntervalNs; };

  unlink(map.c_str());
  ASSERT_EQ(mkfifo(map.c_str(), 0600), 0);
  JitMaps fifo;
  EXPECT_EQ(fifo.find(pid, 0, code, step(), false), nullptr);  // returns: does not block
  unlink(map.c_str());

  ASSERT_EQ(symlink(real.c_str(), map.c_str()), 0);
  JitMaps link;
  EXPECT_EQ(link.find(pid, 0, code, step(), false), nullptr);
  unlink(map.c_str());

  std::filesystem::copy_file(real, map);
  JitMaps file;
  const ElfSymbol* s = file.find(pid, 0, code + 4, step(), false);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "marked");
  unlink(map.c_str());
}

// A map written after the samples were taken (a JVM's at its exit) names
// the addresses that found none, once, when asked.
TEST(PerfMap, AMapWrittenLateNamesWhatWasMissed) {
  const uint32_t pid = static_cast<uint32_t>(getpid());
  const std::string map = "/tmp/perf-" + std::to_string(pid) + ".map";
  auto code = reinterpret_cast<uint64_t>(&ebprof_parser_test_marker);
  unlink(map.c_str());
  JitMaps maps;
  EXPECT_EQ(maps.find(pid, 0, code + 4, 1'000'000'000, true), nullptr);
  EXPECT_EQ(maps.missed(), std::vector<uint32_t>{pid});
  std::ofstream(map) << std::hex << code << " 10 marked\n" << code + 0x100 << " 10 unsampled\n";
  const std::vector<ElfSymbol> named = maps.name_missed(pid);
  ASSERT_EQ(named.size(), 1u) << "only what a sample was in";
  EXPECT_EQ(named[0].name, "marked");
  EXPECT_TRUE(maps.missed().empty());
  EXPECT_TRUE(maps.name_missed(pid).empty());
  unlink(map.c_str());
}

// Gone, a process that shared the recorder's mount namespace is named from
// the map it left in the recorder's own /tmp, if its owner's or root's.
TEST(PerfMap, AGoneProcesssMapIsReadFromTheRecordersTmp) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  const uint32_t pid = static_cast<uint32_t>(child);
  const std::string map = "/tmp/perf-" + std::to_string(pid) + ".map";
  unlink(map.c_str());
  JitMaps maps;
  EXPECT_EQ(maps.find(pid, 0, 0x7f0000001004, 1'000'000'000, true), nullptr);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  std::ofstream(map) << "7f0000001000 10 written_at_exit\n";
  const std::vector<ElfSymbol> named = maps.name_missed(pid);
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].name, "written_at_exit");

  // Not where its /tmp was its own (a container's).
  JitMaps contained;
  const pid_t other = fork();
  ASSERT_GE(other, 0);
  if (other == 0) {
    pause();
    _exit(0);
  }
  EXPECT_EQ(contained.find(uint32_t(other), 0, 0x7f0000001004, 1'000'000'000, false), nullptr);
  kill(other, SIGKILL);
  waitpid(other, nullptr, 0);
  const std::string other_map = "/tmp/perf-" + std::to_string(other) + ".map";
  std::ofstream(other_map) << "7f0000001000 10 not_its_own\n";
  EXPECT_TRUE(contained.name_missed(uint32_t(other)).empty());
  unlink(map.c_str());
  unlink(other_map.c_str());
}

TEST(ProcStatus, NamespacePidIsTheInnermost) {
  EXPECT_EQ(parse_namespace_pid("Name:\tx\nTgid:\t1234\nNStgid:\t1234\t7\n"), 7u);
  EXPECT_EQ(parse_namespace_pid("NStgid:\t1234\n"), 1234u);
  EXPECT_EQ(parse_namespace_pid("Tgid:\t1234\n"), 0u);  // kernels before 4.1
}

TEST(CpuList, ParsesRangesAndRejectsGarbage) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("0"), (std::vector<int>{0}));
  EXPECT_THROW(parse_cpu_list("3-1"), Error);
  EXPECT_THROW(parse_cpu_list("a"), Error);
  EXPECT_THROW(parse_cpu_list(""), Error);
  EXPECT_FALSE(online_cpus().empty());
}

TEST(SwitchOutput, PerfsValues) {
  using When = SwitchOutput::When;
  EXPECT_EQ(parse_switch_output("signal")->when, When::kSignal);
  EXPECT_EQ(parse_switch_output("100M")->bytes, 100u << 20);
  EXPECT_EQ(parse_switch_output("5B")->bytes, 5u);
  EXPECT_EQ(parse_switch_output("2G")->bytes, uint64_t{2} << 30);
  EXPECT_EQ(parse_switch_output("30s")->period_ns, 30'000'000'000u);
  EXPECT_EQ(parse_switch_output("2h")->period_ns, 7'200'000'000'000u);
  EXPECT_EQ(parse_switch_output("1d")->when, When::kTime);
  for (const char* bad : {"", "0s", "10", "10x", "s", "1.5m", "-1s", "99999999999999999999G"})
    EXPECT_FALSE(parse_switch_output(bad)) << bad;
}

TEST(SwitchOutput, FilesAreNamedByTheirUtcTimeAndTheOldestGo) {
  // 2026-12-01 10:05:07.89 UTC
  const uint64_t t = 1'796'119'507'890'000'000;
  EXPECT_EQ(switched_name("dir/perf.data", t), "dir/perf.data.2026120110050789");
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "switched";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "x.data").string();
  SwitchedFiles files(2);
  for (int i = 0; i < 3; ++i) {
    std::ofstream(out) << i;
    files.keep(out, t);  // one name taken twice: never replaced
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(switched_name(out, t))) << "the oldest, removed";
  EXPECT_EQ(files.files(),
            (std::deque<std::string>{switched_name(out, t) + "-1", switched_name(out, t) + "-2"}));
  std::ifstream last(switched_name(out, t) + "-2");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(last), {}), "2");
  EXPECT_EQ(files.kept(), 3u);
}

TEST(FlightRecorder, KeepsTheWindowWithinItsSize) {
  constexpr uint64_t kSecond = 1'000'000'000;
  FlightRecorder flight(10 * kSecond, 5000);
  EXPECT_EQ(flight.slice_ns(), 2 * kSecond) << "a fifth of the window";
  EXPECT_EQ(FlightRecorder(2 * kSecond, 1).slice_ns(), kSecond) << "at least a second";
  auto slice = [&](off_t size) {
    UniqueFd fd = flight.new_slice();
    EXPECT_EQ(ftruncate(fd.get(), size), 0);
    return fd;
  };
  for (uint64_t end = 2; end <= 20; end += 2)  // slices of 2 s ending at 2, 4, ... 20 s
    flight.keep(slice(100), (end - 2) * kSecond, end * kSecond);
  // The window of 10 s back from 20 s is covered by the slices from 10 s on.
  EXPECT_EQ(flight.bytes(), 500u);
  flight.keep(slice(4800), 20 * kSecond, 22 * kSecond);
  EXPECT_LE(flight.bytes(), 5000u) << "the oldest go past the size";
  flight.keep(slice(9000), 22 * kSecond, 24 * kSecond);
  EXPECT_EQ(flight.bytes(), 9000u) << "the newest stays, whatever its size";
}

}  // namespace
}  // namespace ebprof::record
