// End-to-end: real BPF, a real workload, assertions on what the report says.
// Tests that need root or kernel BTF skip with the reason when it is absent.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "browser.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

const std::string kRecord = EBPROF_RECORD_BIN;
const std::string kReport = EBPROF_REPORT_BIN;
const std::string kHotcold = EBPROF_HOTCOLD_BIN;
const std::string kShortlived = EBPROF_SHORTLIVED_BIN;
const std::string kTwoThreads = EBPROF_TWO_THREADS_BIN;
const std::string kOffCpu = EBPROF_OFFCPU_BIN;
const std::string kDlopenHost = EBPROF_DLOPEN_HOST_BIN;
const std::string kJit = EBPROF_JIT_BIN;
const std::string kNofp = EBPROF_NOFP_BIN;
const std::string kWithfp = EBPROF_WITHFP_BIN;
const std::string kNofpLib = EBPROF_NOFP_LIB;
const std::string kLibcleaf = EBPROF_LIBCLEAF_BIN;
const std::string kLeafChain = "demo::hot_leaf(unsigned long)";

#define REQUIRE_BPF()                                    \
  do {                                                   \
    if (geteuid() != 0)                                  \
      GTEST_SKIP() << "needs root to load BPF programs"; \
    if (!fs::exists("/sys/kernel/btf/vmlinux"))          \
      GTEST_SKIP() << "kernel has no BTF";               \
  } while (0)

std::string temp_file(const std::string& name) {
  return (fs::path(testing::TempDir()) / name).string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Outcome {
  int status = -1;
  std::string out, err;
};

Outcome run(const std::string& command) {
  std::string out = temp_file("cmd.out"), err = temp_file("cmd.err");
  int rc = std::system((command + " >" + out + " 2>" + err + " </dev/null").c_str());
  return Outcome{WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc), slurp(out), slurp(err)};
}

int lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

pid_t spawn(std::vector<std::string> argv) {
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0)
    return -1;
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Shares of the two call chains of hotcold in folded output.
struct Shares {
  uint64_t total = 0, via_a = 0, via_b = 0;
  double pct_a() const { return 100.0 * via_a / total; }
  double pct_b() const { return 100.0 * via_b / total; }
};

Shares hotcold_shares(const std::string& folded) {
  Shares s;
  std::istringstream in(folded);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("hotcold;", 0) != 0)
      continue;
    uint64_t n = std::stoull(line.substr(line.rfind(' ') + 1));
    s.total += n;
    if (line.find("main;demo::caller_a();" + kLeafChain) != std::string::npos)
      s.via_a += n;
    if (line.find("main;demo::caller_b();" + kLeafChain) != std::string::npos)
      s.via_b += n;
  }
  return s;
}

// One row of the top table: samples, command, shared object, symbol.
struct TopRow {
  uint64_t samples = 0;
  std::string comm, dso, symbol;
};

std::vector<TopRow> top_rows(const std::string& data) {
  Outcome top = run(kReport + " -n 0 -i " + data);
  EXPECT_EQ(top.status, 0) << top.err;
  std::vector<TopRow> rows;
  std::istringstream in(top.out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    std::string children, self, kind;
    TopRow row;
    fields >> children >> self >> row.samples >> row.comm >> row.dso >> kind;
    std::getline(fields >> std::ws, row.symbol);
    rows.push_back(row);
  }
  return rows;
}

// hotcold spends 70% of its time in hot_leaf under caller_a, 30% under
// caller_b: the report must find both chains with those shares.
void expect_hotcold_profile(const std::string& data) {
  Outcome folded = run(kReport + " -i " + data + " --format folded");
  ASSERT_EQ(folded.status, 0) << folded.err;
  Shares s = hotcold_shares(folded.out);
  ASSERT_GE(s.total, 200u) << folded.out;
  EXPECT_NEAR(s.pct_a(), 70, 10) << folded.out;
  EXPECT_NEAR(s.pct_b(), 30, 10) << folded.out;

  Outcome top = run(kReport + " -i " + data);
  ASSERT_EQ(top.status, 0) << top.err;
  // The first row of the table is the hot leaf, in its shared library.
  auto first_row = top.out.find("\n  ");
  ASSERT_NE(first_row, std::string::npos) << top.out;
  std::string row = top.out.substr(first_row + 1, top.out.find('\n', first_row + 1) - first_row);
  EXPECT_NE(row.find("[.] " + kLeafChain), std::string::npos) << top.out;
  EXPECT_NE(row.find("libebprof_demo.so"), std::string::npos) << top.out;
  EXPECT_EQ(top.out.find("no end frame"), std::string::npos) << top.out;
}

TEST(EndToEnd, RecordsACommandAndFindsItsHotChains) {
  REQUIRE_BPF();
  std::string data = temp_file("command.data");
  Outcome rec = run(kRecord + " -F 499 -o " + data + " -- " + kHotcold + " 2");
  ASSERT_EQ(rec.status, 0) << rec.err;
  EXPECT_NE(rec.err.find("samples"), std::string::npos) << rec.err;
  expect_hotcold_profile(data);
}

// The recorder exits with its command's status, as perf does, so that
// `ebprof-record -- make test && ...` works; a command killed by a signal
// gives 128 + the signal and says so; the recording is whole either way.
TEST(EndToEnd, ExitsWithTheCommandsStatus) {
  REQUIRE_BPF();
  const std::string data = temp_file("status.data");
  Outcome failed = run(kRecord + " -F 99 -o " + data + " -- sh -c 'exit 3'");
  EXPECT_EQ(failed.status, 3) << failed.err;
  EXPECT_EQ(failed.err.find("killed"), std::string::npos) << failed.err;
  EXPECT_EQ(run(kReport + " info " + data).status, 0);
  Outcome killed = run(kRecord + " -F 99 -o " + data + " -- sh -c 'kill -SEGV $$'");
  EXPECT_EQ(killed.status, 128 + SIGSEGV) << killed.err;
  EXPECT_NE(killed.err.find("ebprof-record: the command was killed by SIGSEGV\n"),
            std::string::npos)
      << killed.err;
  EXPECT_EQ(run(kReport + " info " + data).status, 0);
  EXPECT_EQ(run(kRecord + " -q -F 99 -o " + data + " -- true").status, 0);
}

// perf record beside a running ebprof-record: Debian's perf 6.1 aborted
// ("assertion failed at util/build-id.c:1010", "stack smashing detected")
// when ebprof's side-band event asked the kernel for build-ids in mapping
// records, whose flag then leaked onto perf's records.
TEST(EndToEnd, PerfRecordsBesideARunningRecording) {
  REQUIRE_BPF();
  if (run("perf --version").status != 0)
    GTEST_SKIP() << "perf is not installed (apt-get install linux-perf)";
  const std::string data = temp_file("beside-perf.data");
  const std::string perf_data = temp_file("beside.perf");
  const pid_t recorder = spawn({kRecord, "-q", "-a", "-F", "99", "-o", data, "--duration", "8"});
  ASSERT_GT(recorder, 0);
  // Until the recorder writes, its events are open.
  for (int i = 0; i < 100 && (!fs::exists(data) || fs::file_size(data) == 0); ++i)
    usleep(50'000);
  usleep(300'000);
  Outcome perf = run("perf record -q -o " + perf_data + " -- " + kHotcold + " 0.3");
  kill(recorder, SIGINT);
  EXPECT_EQ(wait_exit(recorder), 0);
  EXPECT_EQ(perf.status, 0) << perf.err;
  EXPECT_EQ(perf.err.find("assertion failed"), std::string::npos) << perf.err;
  EXPECT_EQ(perf.err.find("stack smashing"), std::string::npos) << perf.err;
  EXPECT_NE(run("perf report --stdio -i " + perf_data).out.find("hot_leaf"), std::string::npos);
  // What ebprof recorded meanwhile names hotcold's frames too, build-ids
  // and all, though its mapping records no longer carry any.
  const std::string folded = run(kReport + " -i " + data + " --format folded").out;
  EXPECT_NE(folded.find("demo::hot_leaf(unsigned long)"), std::string::npos) << folded;
}

// perf-style: options stop at the command (no -- needed), and the command's
// children are followed: here the workload runs under a shell that forks it.
TEST(EndToEnd, FollowsTheChildrenOfTheCommand) {
  REQUIRE_BPF();
  std::string data = temp_file("child.data");
  Outcome rec = run(kRecord + " -F 499 -o " + data + " sh -c '" + kHotcold + " 2; true'");
  ASSERT_EQ(rec.status, 0) << rec.err;
  expect_hotcold_profile(data);
}

// Records a private copy of hotcold, so the test can delete or replace it.
std::string record_copy(const std::string& name, const std::string& flags, fs::path& exe) {
  fs::path dir = fs::path(testing::TempDir()) / name;
  fs::create_directories(dir);
  exe = dir / "hotcold";
  fs::copy_file(kHotcold, exe, fs::copy_options::overwrite_existing);
  std::string data = temp_file(name + ".data");
  Outcome rec = run(kRecord + " -F 499 " + flags + " -o " + data + " -- " + exe.string() + " 1");
  EXPECT_EQ(rec.status, 0) << rec.err;
  return data;
}

// The recording is self-contained: with its binary deleted, or replaced by
// another build, the report names its frames from the embedded table.
TEST(EndToEnd, EmbeddedSymbolsNameADeletedOrReplacedBinary) {
  REQUIRE_BPF();
  fs::path exe;
  std::string data = record_copy("deleted", "", exe);
  fs::remove(exe);
  expect_hotcold_profile(data);

  data = record_copy("rebuilt", "", exe);
  fs::copy_file(kRecord, exe, fs::copy_options::overwrite_existing);
  expect_hotcold_profile(data);
}

// Without embedded tables, a binary replaced after recording (a rebuild, an
// upgrade) must never lend its names: its frames are unknown, with the reason.
TEST(EndToEnd, AReplacedBinaryNeverLendsItsNames) {
  REQUIRE_BPF();
  fs::path exe;
  std::string data = record_copy("replaced", "--no-embed-symbols", exe);
  fs::copy_file(kRecord, exe, fs::copy_options::overwrite_existing);  // another ELF, same path

  Outcome folded = run(kReport + " -i " + data + " --format folded");
  ASSERT_EQ(folded.status, 0) << folded.err;
  EXPECT_NE(folded.out.find("[unknown] (hotcold+0x"), std::string::npos) << folded.out;
  EXPECT_NE(folded.out.find(", build-id mismatch);" + kLeafChain), std::string::npos) << folded.out;
  EXPECT_EQ(folded.out.find("caller_a"), std::string::npos) << folded.out;
}

TEST(EndToEnd, AWorkloadIgnoringSigtermDoesNotHangTheStop) {
  REQUIRE_BPF();
  auto start = std::chrono::steady_clock::now();
  Outcome rec = run(kRecord + " --duration 0.5 -o " + temp_file("stubborn.data") +
                    " -- sh -c 'trap \"\" TERM; exec sleep 60'");
  EXPECT_EQ(rec.status, 0) << rec.err;
  // The workload would run for a minute: SIGKILL after the grace period.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(EndToEnd, RecordsARunningProcessByPid) {
  REQUIRE_BPF();
  pid_t pid = spawn({kHotcold, "4"});
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::string data = temp_file("pid.data");
  Outcome rec = run(kRecord + " -F 499 -p " + std::to_string(pid) + " --duration 2 -o " + data);
  kill(pid, SIGTERM);
  wait_exit(pid);
  ASSERT_EQ(rec.status, 0) << rec.err;
  expect_hotcold_profile(data);
}

// -p ends when its process does, though it lingers as a zombie (kill(pid,
// 0) still succeeds on one, and on whatever reuses its pid).
TEST(EndToEnd, RecordingByPidEndsWhenTheTargetIsAZombie) {
  REQUIRE_BPF();
  const pid_t zombie = fork();
  ASSERT_GE(zombie, 0);
  if (zombie == 0)
    _exit(0);  // not reaped until the test is done: a zombie meanwhile
  for (int i = 0; i < 100 && slurp("/proc/" + std::to_string(zombie) + "/stat").find(") Z ") ==
                                 std::string::npos;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto start = std::chrono::steady_clock::now();
  Outcome rec = run("timeout 60 " + kRecord + " -q -p " + std::to_string(zombie) + " -o " +
                    temp_file("zombie.data"));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  waitpid(zombie, nullptr, 0);
  EXPECT_EQ(rec.status, 0) << rec.err;
  EXPECT_LT(seconds, 20) << "the recording did not end with its target";
}

TEST(EndToEnd, InfoAndDumpDescribeARealRecording) {
  REQUIRE_BPF();
  std::string data = temp_file("info.data");
  Outcome rec = run(kRecord + " -F 499 -o " + data + " -- " + kHotcold + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  std::string samples = rec.err.substr(rec.err.find('(') + 1);
  samples = samples.substr(0, samples.find(' '));

  Outcome info = run(kReport + " info " + data);
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("samples         " + samples + "\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("lost            0\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("transport ringbuf"), std::string::npos) << info.out;

  Outcome dump = run(kReport + " dump -i " + data);
  ASSERT_EQ(dump.status, 0) << dump.err;
  EXPECT_NE(dump.out.find("libebprof_demo.so build-id "), std::string::npos);
  EXPECT_NE(dump.out.find("_ZN4demo8hot_leafEm"), std::string::npos);  // its embedded table
  EXPECT_NE(dump.out.find("  pid namespace "), std::string::npos) << dump.out;
  EXPECT_NE(dump.out.find(", root /\n"), std::string::npos) << dump.out;
}

TEST(EndToEnd, SigintEndsASystemWideRecordingCleanly) {
  REQUIRE_BPF();
  std::string data = temp_file("sigint.data");
  pid_t rec = spawn({kRecord, "-a", "-o", data});
  ASSERT_GT(rec, 0);
  pid_t load = spawn({kHotcold, "2"});
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(rec, SIGINT);
  EXPECT_EQ(wait_exit(rec), 0);
  wait_exit(load);
  Outcome top = run(kReport + " -n 0 -i " + data);
  ASSERT_EQ(top.status, 0) << top.err;
  EXPECT_EQ(top.out.find("no end frame"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("hotcold"), std::string::npos) << top.out;
}

TEST(EndToEnd, ACutRecordingStillReportsWhatItHolds) {
  REQUIRE_BPF();
  std::string data = temp_file("cut.data");
  ASSERT_EQ(run(kRecord + " -F 499 -o " + data + " -- " + kHotcold + " 1").status, 0);
  // Lose the last few bytes, as a recorder killed mid-write would.
  fs::resize_file(data, fs::file_size(data) - 5);
  Outcome top = run(kReport + " -i " + data);
  EXPECT_EQ(top.status, 0) << top.err;
  EXPECT_NE(top.err.find("warning:"), std::string::npos) << top.err;
  EXPECT_EQ(lines(top.err), 1) << top.err;
  EXPECT_NE(top.out.find(kLeafChain), std::string::npos) << top.out;
}

// A full disk stops recording with one clear line, and what was written
// before still reads.
TEST(EndToEnd, AFullDiskStopsCleanlyAndKeepsTheFile) {
  REQUIRE_BPF();
  fs::path dir = fs::path(testing::TempDir()) / "tiny-fs";
  fs::create_directories(dir);
  umount2(dir.c_str(), MNT_DETACH);
  if (mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  std::string data = (dir / "full.data").string();
  Outcome rec =
      run(kRecord + " -a -F 999 --compression none -o " + data + " -- " + kHotcold + " 20");
  Outcome top = run(kReport + " -i " + data);
  umount2(dir.c_str(), MNT_DETACH);
  EXPECT_EQ(rec.status, 1) << rec.err;
  EXPECT_NE(rec.err.find("No space left on device"), std::string::npos) << rec.err;
  EXPECT_NE(rec.err.find("the recording so far is intact"), std::string::npos) << rec.err;
  EXPECT_EQ(lines(rec.err), 1) << rec.err;
  EXPECT_EQ(top.status, 0) << top.err;
  EXPECT_NE(top.out.find(" of cpu-clock at 999 Hz"), std::string::npos) << top.out;
}

// -C: only the listed CPUs are sampled; a CPU that is not online is one line.
TEST(EndToEnd, CpuListLimitsSamplingToThoseCpus) {
  REQUIRE_BPF();
  std::string data = temp_file("cpu0.data");
  pid_t a = spawn({kHotcold, "1.5"}), b = spawn({kHotcold, "1.5"});  // load on both CPUs
  Outcome rec = run(kRecord + " -a -C 0 --duration 1 -o " + data);
  wait_exit(a);
  wait_exit(b);
  ASSERT_EQ(rec.status, 0) << rec.err;
  Outcome dump = run(kReport + " dump " + data);
  ASSERT_EQ(dump.status, 0) << dump.err;
  int samples = 0, off_cpu0 = 0;
  std::istringstream in(dump.out);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("sample "))
      continue;
    ++samples;
    off_cpu0 += line.find(" cpu 0 ") == std::string::npos;
  }
  EXPECT_GT(samples, 50);
  EXPECT_EQ(off_cpu0, 0);

  Outcome bad = run(kRecord + " -C 4095 --duration 1 -o " + temp_file("cpu-bad.data"));
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("CPU 4095 is not online"), std::string::npos) << bad.err;
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
}

// -e and -c like perf: a software event every N events; a hardware event
// works where a PMU exists and is one clear line where it does not.
// 200 children that each live ~20 ms, gone long before /proc could be read:
// the kernel's mapping events still name their frames.
TEST(EndToEnd, ShortLivedChildrenAreSymbolized) {
  REQUIRE_BPF();
  std::string data = temp_file("shortlived.data");
  Outcome rec = run(kRecord + " -F 999 -o " + data + " -- " + kShortlived + " 200");
  ASSERT_EQ(rec.status, 0) << rec.err;
  // User-space samples of the children (and their parent): named ones in
  // the binary, mostly burn_briefly, some start-up and fork code; unnamed
  // ones anywhere.
  uint64_t burn = 0, named = 0, unnamed = 0;
  for (const TopRow& row : top_rows(data)) {
    if (row.comm != "shortlived")
      continue;
    if (row.symbol.starts_with("[unknown]")) {
      unnamed += row.samples;
    } else if (row.dso == "shortlived") {
      named += row.samples;
      burn += row.symbol == "burn_briefly(unsigned long)" ? row.samples : 0;
    }
  }
  // 200 x ~20 ms at 999 Hz is ~4000 samples; a loaded machine gives fewer.
  EXPECT_GT(burn, 1000u);
  EXPECT_GE(burn, 0.8 * named) << burn << " of " << named;
  EXPECT_LE(unnamed, 0.05 * (named + unnamed)) << unnamed << " of " << named + unnamed;
}

// A library unloaded and another loaded at the very same addresses: each
// one's samples carry its own names.
TEST(EndToEnd, DlopenedLibrariesResolveEvenAtReusedAddresses) {
  REQUIRE_BPF();
  std::string data = temp_file("dlopen.data");
  Outcome rec = run(kRecord + " -F 999 -o " + data + " -- " + kDlopenHost + " 1 " +
                    EBPROF_PLUGIN_A + " " + EBPROF_PLUGIN_B);
  ASSERT_EQ(rec.status, 0) << rec.err;
  uint64_t a = 0, b = 0, total = 0;
  for (const TopRow& row : top_rows(data)) {
    total += row.samples;
    a += row.symbol == "plugin_a_spin" && row.dso == "libebprof_plugin_a.so" ? row.samples : 0;
    b += row.symbol == "plugin_b_spin" && row.dso == "libebprof_plugin_b.so" ? row.samples : 0;
  }
  ASSERT_GT(total, 500u);
  EXPECT_NEAR(100.0 * a / total, 50, 10) << a << " " << b << " of " << total;
  EXPECT_NEAR(100.0 * b / total, 50, 10) << a << " " << b << " of " << total;
}

// JIT code is named from the perf map the process wrote, read while it
// lived: the workload deletes the map when it exits.
TEST(EndToEnd, JitCodeIsNamedFromItsPerfMap) {
  REQUIRE_BPF();
#if !defined(__x86_64__)
  GTEST_SKIP() << "the JIT workload generates x86-64 code";
#endif
  std::string data = temp_file("jit.data");
  Outcome rec = run(kRecord + " -F 999 -o " + data + " -- " + kJit + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  uint64_t jitted = 0, total = 0;
  for (const TopRow& row : top_rows(data)) {
    total += row.samples;
    jitted += row.symbol == "jitted_spin" && row.dso.starts_with("perf-") ? row.samples : 0;
  }
  EXPECT_GT(total, 500u);
  EXPECT_GE(jitted, 0.9 * total) << jitted << " of " << total;
}

// -t samples one thread of a process and not its sibling.
TEST(EndToEnd, TidPicksOneThread) {
  REQUIRE_BPF();
  std::string tids = temp_file("tids.out");
  pid_t pid = spawn({"/bin/sh", "-c", kTwoThreads + " 3 >" + tids});
  ASSERT_GT(pid, 0);
  std::string first_line;
  for (int i = 0; i < 100 && first_line.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::istringstream(slurp(tids)) >> first_line;
  }
  ASSERT_FALSE(first_line.empty());
  std::string data = temp_file("tid.data");
  Outcome rec = run(kRecord + " -F 499 -t " + first_line + " --duration 1.5 -o " + data);
  wait_exit(pid);
  ASSERT_EQ(rec.status, 0) << rec.err;
  uint64_t a = 0, other = 0;
  for (const TopRow& row : top_rows(data))
    (row.symbol.find("thread_a_work") != std::string::npos ? a : other) += row.samples;
  EXPECT_GT(a, 100u);
  EXPECT_LE(other, a / 50) << "samples outside thread A's function";
}

// A uprobe takes a stack on every call: hotcold --rounds 1000 calls hot_leaf
// exactly 1000 times from each caller.
TEST(EndToEnd, UprobeTakesAStackOnEveryCall) {
  REQUIRE_BPF();
  std::string lib = (fs::path(kHotcold).parent_path() / "libebprof_demo.so").string();
  std::string data = temp_file("uprobe.data");
  Outcome rec = run(kRecord + " -e uprobe:" + lib + ":_ZN4demo8hot_leafEm -o " + data + " -- " +
                    kHotcold + " --rounds 1000");
  ASSERT_EQ(rec.status, 0) << rec.err;
  Shares s = hotcold_shares(run(kReport + " -i " + data + " --format folded").out);
  EXPECT_EQ(s.via_a, 1000u);
  EXPECT_EQ(s.via_b, 1000u);
  EXPECT_EQ(s.total, 2000u);
  Outcome info = run(kReport + " info " + data);
  EXPECT_NE(info.out.find("uprobe:" + lib + ":_ZN4demo8hot_leafEm on every event"),
            std::string::npos)
      << info.out;

  Outcome missing = run(kRecord + " -e uprobe:" + lib + ":no_such_function -o " +
                        temp_file("uprobe-bad.data") + " -- true");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("has no function no_such_function"), std::string::npos) << missing.err;
  EXPECT_EQ(lines(missing.err), 1) << missing.err;
}

// A tracepoint, too: each of 20 children execs once, after the command's
// own exec (which, as with perf, is in the recording).
TEST(EndToEnd, TracepointTakesAStackOnEveryHit) {
  REQUIRE_BPF();
  std::string data = temp_file("tracepoint.data");
  Outcome rec = run(kRecord + " -e tracepoint:sched:sched_process_exec -o " + data + " -- " +
                    kShortlived + " 20");
  ASSERT_EQ(rec.status, 0) << rec.err;
  uint64_t execs = 0;
  for (const TopRow& row : top_rows(data))
    execs += row.comm == "shortlived" ? row.samples : 0;
  EXPECT_EQ(execs, 21u);

  Outcome bad = run(kRecord + " -e sched:no_such_tracepoint -o " + temp_file("tp-bad.data"));
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("no tracepoint sched:no_such_tracepoint"), std::string::npos) << bad.err;
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
}

// kprobes work where the kernel has them, and say so in one line where not.
TEST(EndToEnd, KprobeRecordsOrSaysTheKernelHasNone) {
  REQUIRE_BPF();
  std::string data = temp_file("kprobe.data");
  Outcome rec = run(kRecord + " -e kprobe:do_sys_openat2 -o " + data + " -- cat /etc/hostname");
  if (rec.status == 0) {
    Outcome top = run(kReport + " -i " + data);
    EXPECT_NE(top.out.find("do_sys_openat2"), std::string::npos) << top.out;
    return;
  }
  EXPECT_EQ(rec.status, 1);
  EXPECT_NE(rec.err.find("this kernel has no kprobes"), std::string::npos) << rec.err;
  EXPECT_NE(rec.err.find("tracepoint"), std::string::npos) << rec.err;  // what to use instead
  EXPECT_EQ(lines(rec.err), 1) << rec.err;
}

// A buffer far too small for the rate drops samples: every drop is counted,
// per CPU and cause, and the file, the summary line and `info` agree.
TEST(EndToEnd, DroppedSamplesAreCountedPerCpuAndCause) {
  REQUIRE_BPF();
  for (const char* transport : {"ringbuf", "perfbuf"}) {
    std::string data = temp_file(std::string("lossy-") + transport + ".data");
    Outcome rec = run(kRecord + " -a -F 4999 -m 1 --transport " + transport + " -o " + data +
                      " -- " + kHotcold + " 1.5");
    ASSERT_EQ(rec.status, 0) << rec.err;
    std::string lost = rec.err.substr(rec.err.find("processes, ") + 11);
    lost = lost.substr(0, lost.find(' '));
    ASSERT_GT(std::stoull(lost), 0u) << rec.err;

    Outcome info = run(kReport + " info " + data);
    EXPECT_NE(info.out.find("lost            " + lost + " (buffer full: " + lost + ")"),
              std::string::npos)
        << transport << "\n"
        << info.out;
    // The per-CPU reports add up to the total.
    std::string where = info.out.substr(info.out.find("lost where      "));
    where = where.substr(0, where.find('\n'));
    uint64_t sum = 0;
    for (size_t at = where.find("cpu "); at != std::string::npos; at = where.find("cpu ", at + 1))
      sum += std::stoull(where.substr(where.find(": ", at) + 2));
    EXPECT_EQ(sum, std::stoull(lost)) << where;
  }
}

// kptr_restrict=2 hides kernel addresses even from root: the recorder says
// so once, records what it can, and the file says why kernel frames are
// unnamed.
TEST(EndToEnd, HiddenKernelAddressesAreSaidOnceAndRecorded) {
  REQUIRE_BPF();
  const std::string sysctl = "/proc/sys/kernel/kptr_restrict";
  const std::string before = slurp(sysctl);
  if (before.empty() || !(std::ofstream(sysctl) << "2\n"))
    GTEST_SKIP() << "cannot set kernel.kptr_restrict here";
  std::string data = temp_file("hidden.data");
  Outcome rec = run(kRecord + " -F 499 -o " + data + " -- " + kHotcold + " 0.5");
  std::ofstream(sysctl) << before;
  ASSERT_EQ(rec.status, 0) << rec.err;
  EXPECT_NE(rec.err.find("warning: kernel addresses are hidden"), std::string::npos) << rec.err;
  EXPECT_EQ(lines(rec.err), 2) << rec.err;  // the warning and the summary
  Outcome info = run(kReport + " info " + data);
  EXPECT_NE(info.out.find("addresses were hidden by kernel.kptr_restrict"), std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("kernel          build-id "), std::string::npos) << info.out;
}

// Sample counts of a report's folded output, checked line by line the way
// flamegraph.pl reads it: frames, one space, a count.
uint64_t folded_total(const std::string& data, const std::string& flags) {
  Outcome folded = run(kReport + " -i " + data + " --format folded " + flags);
  EXPECT_EQ(folded.status, 0) << folded.err;
  uint64_t total = 0;
  std::istringstream in(folded.out);
  for (std::string line; std::getline(in, line);) {
    size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    EXPECT_GT(space, 0u) << line;
    std::string count = line.substr(space + 1);
    EXPECT_EQ(count.find_first_not_of("0123456789"), std::string::npos) << line;
    EXPECT_EQ(line.find(";;"), std::string::npos) << line;
    total += std::stoull(count);
  }
  return total;
}

// Filters split a recording exactly: complementary filters add up to the
// whole, and script prints one block per sample kept.
TEST(EndToEnd, ReportFiltersAndOutputsAddUp) {
  REQUIRE_BPF();
  std::string data = temp_file("filters.data");
  Outcome rec = run(kRecord + " -a -F 499 -o " + data + " -- " + kHotcold + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  const uint64_t all = folded_total(data, "--include-idle");
  const uint64_t busy = folded_total(data, "");
  ASSERT_GT(all, 300u);
  EXPECT_LE(busy, all);

  const uint64_t hotcold = folded_total(data, "--comm hotcold");
  EXPECT_GT(hotcold, 300u);
  EXPECT_EQ(folded_total(data, "--time ,0.5") + folded_total(data, "--time 0.5,"), busy);
  EXPECT_EQ(folded_total(data, "--cpu 0") + folded_total(data, "--cpu 1"), busy);
  EXPECT_EQ(folded_total(data, "--comm hotcold --symbol caller_a") +
                folded_total(data, "--comm hotcold --symbol caller_b"),
            folded_total(data, "--comm hotcold --symbol 'caller_[ab]'"));
  EXPECT_EQ(folded_total(data, "--comm hotcold --dso libebprof_demo.so"),
            folded_total(data, "--comm hotcold --symbol hot_leaf"));
  // --user-only drops only the samples taken with no user stack.
  EXPECT_LE(folded_total(data, "--user-only"), busy);

  // script: one block per sample, perf script's header line.
  Outcome script = run(kReport + " -i " + data + " --format script --comm hotcold");
  ASSERT_EQ(script.status, 0) << script.err;
  uint64_t blocks = 0;
  std::istringstream in(script.out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '\t')
      continue;
    ++blocks;
    EXPECT_NE(line.find(" cpu-clock:"), std::string::npos) << line;
    EXPECT_TRUE(line.starts_with("hotcold ")) << line;
  }
  EXPECT_EQ(blocks, hotcold);
  EXPECT_NE(script.out.find("\t"), std::string::npos);
  EXPECT_NE(script.out.find(" demo::hot_leaf(unsigned long)+0x"), std::string::npos);

  // -o writes the file; a closed pipe ends the report quietly.
  std::string out = temp_file("report.txt");
  Outcome to_file = run(kReport + " -i " + data + " -o " + out + " --format folded");
  EXPECT_EQ(to_file.status, 0) << to_file.err;
  EXPECT_TRUE(to_file.out.empty());
  EXPECT_NE(slurp(out).find("hot_leaf"), std::string::npos);
  Outcome piped = run(kReport + " -i " + data + " --format script | head -1");
  EXPECT_EQ(piped.status, 0);
  EXPECT_EQ(piped.err, "");
  // -o naming the recording itself would truncate it before it is read.
  Outcome self = run(kReport + " -i " + data + " -o " + data);
  EXPECT_EQ(self.status, 1);
  EXPECT_NE(self.err.find("is the recording being read"), std::string::npos) << self.err;
  EXPECT_GT(fs::file_size(data), 1000u);
  Outcome bad = run(kReport + " -i " + data + " -o /nonexistent/dir/report.txt");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("cannot write /nonexistent/dir/report.txt"), std::string::npos);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
}

// go tool pprof, the real client, reads the pprof output and agrees with
// the top table: the same hot function with the same share, the callers,
// and the labels.
TEST(EndToEnd, PprofIsReadByGoToolPprofAndAgreesWithTop) {
  REQUIRE_BPF();
  if (run("go version").status != 0)
    GTEST_SKIP()
        << "go is not installed (apt-get install golang-go): no pprof client to check with";
  std::string data = temp_file("pprof.data"), pb = temp_file("pprof.pb.gz");
  Outcome rec = run(kRecord + " -F 499 -o " + data + " -- " + kHotcold + " 1.5");
  ASSERT_EQ(rec.status, 0) << rec.err;
  Outcome write = run(kReport + " -i " + data + " --format pprof -o " + pb);
  ASSERT_EQ(write.status, 0) << write.err;

  // Our self share of hot_leaf, from the top table.
  double ours = -1;
  Outcome top = run(kReport + " -i " + data + " -n 0");
  std::istringstream rows(top.out);
  for (std::string line; std::getline(rows, line);)
    if (line.find("[.] " + kLeafChain) != std::string::npos)
      ours = std::stod(line.substr(line.find('%') + 1));
  ASSERT_GT(ours, 50) << top.out;

  Outcome flat = run("go tool pprof -top -nodecount=1000 " + pb);
  ASSERT_EQ(flat.status, 0) << flat.err;
  EXPECT_NE(flat.out.find("File: hotcold"), std::string::npos) << flat.out;
  EXPECT_NE(flat.out.find("Type: cpu"), std::string::npos) << flat.out;
  double theirs = -1;
  std::istringstream lines_in(flat.out);
  for (std::string line; std::getline(lines_in, line);)
    if (line.ends_with(" " + kLeafChain)) {
      std::istringstream fields(line);
      std::string flat_value, flat_pct;
      fields >> flat_value >> flat_pct;
      theirs = std::stod(flat_pct);
    }
  EXPECT_NEAR(theirs, ours, 0.1) << flat.out;

  Outcome traces = run("go tool pprof -traces " + pb);
  ASSERT_EQ(traces.status, 0) << traces.err;
  for (const char* piece : {"comm:  hotcold", "pid:  ", "tid:  ", "cpu:  ", "demo::caller_a()",
                            "demo::caller_b()", "main"})
    EXPECT_NE(traces.out.find(piece), std::string::npos) << piece << "\n" << traces.out;
}

// Both transports carry the same profile; the file says which one ran.
TEST(EndToEnd, PerfBufferTransportRecordsTheSameProfile) {
  REQUIRE_BPF();
  std::string data = temp_file("perfbuf.data");
  Outcome rec = run(kRecord + " --transport perfbuf -F 499 -o " + data + " -- " + kHotcold + " 2");
  ASSERT_EQ(rec.status, 0) << rec.err;
  expect_hotcold_profile(data);
  Outcome info = run(kReport + " info " + data);
  EXPECT_NE(info.out.find("transport perfbuf"), std::string::npos) << info.out;
}

// --cgroup: only tasks in the cgroup (v2) are sampled, system-wide; and
// every sample carries the cgroup it ran in, which the top table sorts by
// and pprof labels with (what fleet backends split by).
TEST(EndToEnd, CgroupLimitsSamplingToItsTasksAndSamplesCarryIt) {
  REQUIRE_BPF();
  std::string root;
  std::istringstream mounts(slurp("/proc/mounts"));
  for (std::string dev, dir, type, rest;
       mounts >> dev >> dir >> type && std::getline(mounts, rest);)
    if (type == "cgroup2")
      root = dir;
  if (root.empty())
    GTEST_SKIP() << "no cgroup v2 hierarchy is mounted";
  const std::string name = "ebprof-test-" + std::to_string(getpid());
  fs::path cg = fs::path(root) / name;
  fs::create_directory(cg);
  pid_t inside =
      spawn({"/bin/sh", "-c",
             "echo $$ > " + (cg / "cgroup.procs").string() + " && exec " + kHotcold + " 2.5"});
  pid_t outside = spawn({"/bin/sh", "-c", "exec " + kTwoThreads + " 2.5 >/dev/null"});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::string data = temp_file("cgroup.data");
  // Relative to the v2 mount, like perf's -G.
  Outcome rec = run(kRecord + " -a -F 499 -G " + name + " --duration 1.5 -o " + data);
  wait_exit(inside);
  wait_exit(outside);
  fs::remove(cg);
  ASSERT_EQ(rec.status, 0) << rec.err;
  uint64_t hotcold = 0, other = 0;
  for (const TopRow& row : top_rows(data))
    (row.comm == "hotcold" ? hotcold : other) += row.samples;
  EXPECT_GT(hotcold, 200u);
  EXPECT_EQ(other, 0u);

  const std::string by_cgroup =
      run(kReport + " -i " + data + " --sort cgroup --call-graph none").out;
  EXPECT_TRUE(std::regex_search(by_cgroup, std::regex(R"(\n +100\.00% +100\.00% +\d+  /)" + name)))
      << by_cgroup;
  const std::string pb = temp_file("cgroup.pb.gz");
  ASSERT_EQ(run(kReport + " -i " + data + " --format pprof --labels cgroup -o " + pb).status, 0);
  if (run("command -v go").status != 0)
    GTEST_SKIP() << "go is not installed: no go tool pprof to read the labels";
  Outcome tags = run("go tool pprof -tags " + pb);
  EXPECT_NE(tags.out.find("(  100%): /" + name), std::string::npos) << tags.out << tags.err;
}

// SIGKILL leaves no chance to finish the file: it still reads up to the
// last flush, at most a second before the kill.
TEST(EndToEnd, ASigkilledRecordingIsReadable) {
  REQUIRE_BPF();
  pid_t load = spawn({kHotcold, "5"});
  std::string data = temp_file("sigkill.data");
  pid_t rec = spawn({kRecord, "-q", "-F", "499", "-p", std::to_string(load), "-o", data});
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  kill(rec, SIGKILL);
  wait_exit(rec);
  kill(load, SIGTERM);
  wait_exit(load);
  Outcome top = run(kReport + " -i " + data);
  ASSERT_EQ(top.status, 0) << top.err;
  EXPECT_NE(top.out.find("recording has no end frame"), std::string::npos) << top.out;
  Shares s = hotcold_shares(run(kReport + " -i " + data + " --format folded").out);
  EXPECT_GT(s.total, 300u);  // at least the first of ~2.5 s at 499 Hz
  EXPECT_NEAR(s.pct_a(), 70, 10);
}

// perf's event modifiers and -F max; -F with a tracepoint, where it does
// not apply, is said so.
TEST(EndToEnd, EventModifiersAndTheHighestRate) {
  REQUIRE_BPF();
  const std::string data = temp_file("modifiers.data");
  Outcome user = run(kRecord + " -e cpu-clock:u -F 499 -o " + data + " -- " + kHotcold + " 1");
  ASSERT_EQ(user.status, 0) << user.err;
  const std::string folded = run(kReport + " -i " + data + " --format folded --annotate").out;
  EXPECT_GT(hotcold_shares(folded).total, 200u) << folded;
  EXPECT_EQ(folded.find("_[k]"), std::string::npos) << "user mode only:\n" << folded;
  Outcome max = run(kRecord + " -q -F max -o " + data + " -- " + kHotcold + " 0.2");
  ASSERT_EQ(max.status, 0) << max.err;
  std::ifstream rate_file("/proc/sys/kernel/perf_event_max_sample_rate");
  uint64_t rate = 0;
  rate_file >> rate;
  const std::string info = run(kReport + " info " + data).out;
  EXPECT_NE(info.find("cpu-clock at " + std::to_string(rate) + " Hz"), std::string::npos) << info;
  Outcome traced =
      run(kRecord + " -F 999 -e tracepoint:sched:sched_process_exec -o " + data + " -- true");
  EXPECT_EQ(traced.status, 0) << traced.err;
  EXPECT_NE(traced.err.find("ebprof-record: warning: tracepoint:sched:sched_process_exec gives a "
                            "stack on every hit: -F does not apply"),
            std::string::npos)
      << traced.err;
}

// The vDSO, an ELF image with no file, is named as perf names it: the
// recorder embeds its symbols by its build-id, from its own copy.
TEST(EndToEnd, TheVdsoIsNamed) {
  REQUIRE_BPF();
  if (run("command -v python3").status != 0)
    GTEST_SKIP() << "python3 is not installed: no clock_gettime loop to record";
  const std::string data = temp_file("vdso.data");
  Outcome rec = run(kRecord + " -F 999 -o " + data +
                    " -- python3 -c 'import time\nfor i in range(2000000): time.monotonic()'");
  ASSERT_EQ(rec.status, 0) << rec.err;
  const std::string top = run(kReport + " -i " + data + " --call-graph none -n 0").out;
  EXPECT_NE(top.find("[vdso]                   [.] __vdso_clock_gettime"), std::string::npos)
      << top;
  EXPECT_EQ(top.find("[unknown] ([vdso]"), std::string::npos) << top;
}

TEST(EndToEnd, SamplesOtherEventsAndSaysWhenOneIsMissing) {
  REQUIRE_BPF();
  std::string data = temp_file("faults.data");
  Outcome rec = run(kRecord + " -q -e page-faults -c 1 -o " + data + " -- " + kHotcold + " 0.3");
  ASSERT_EQ(rec.status, 0) << rec.err;
  Outcome info = run(kReport + " info " + data);
  EXPECT_NE(info.out.find("event           page-faults on every event"), std::string::npos)
      << info.out;
  EXPECT_EQ(info.out.find("samples         0\n"), std::string::npos) << info.out;

  Outcome hw = run(kRecord + " -q -e cycles --duration 0.3 -o " + temp_file("cycles.data"));
  if (hw.status != 0) {
    EXPECT_EQ(hw.status, 1);
    EXPECT_NE(hw.err.find("-e cycles: hardware events are not available here"), std::string::npos)
        << hw.err;
    EXPECT_EQ(lines(hw.err), 1) << hw.err;
  }
}

// A command's software events are its own, counted per task as perf's are
// (inherited by what it starts, from its exec on): opened per CPU they were
// shared with every process there, and at the default frequency the
// command's page faults were never sampled.
TEST(EndToEnd, ACommandsEventsAreItsOwnAndItsChildrens) {
  REQUIRE_BPF();
  const std::string data = temp_file("task-faults.data");
  const std::string command = " -- sh -c '" + kHotcold + " 0.2 & " + kHotcold + " 0.2; wait'";
  // The pids of the samples of each comm in `script`'s output.
  auto pids_by_comm = [](const std::string& script) {
    std::map<std::string, std::set<std::string>> out;
    std::istringstream in(script);
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      std::string comm, ids;
      if (!line.empty() && line[0] != '\t' && words >> comm >> ids)
        out[comm].insert(ids.substr(0, ids.find('/')));
    }
    return out;
  };
  for (int i = 0; i < 3; ++i) {
    Outcome rec = run(kRecord + " -q -e page-faults -o " + data + command);
    ASSERT_EQ(rec.status, 0) << rec.err;
    const auto comms = pids_by_comm(run(kReport + " script -i " + data).out);
    EXPECT_FALSE(comms.empty()) << "run " << i << ": no page fault of the command sampled";
    for (const auto& [comm, pids] : comms)
      EXPECT_TRUE(comm == "sh" || comm == "hotcold") << comm << ": not the command's";
  }
  // Every fault: both hotcold processes, the one sh forked included.
  Outcome rec = run(kRecord + " -q -e page-faults -c 1 -o " + data + command);
  ASSERT_EQ(rec.status, 0) << rec.err;
  const auto comms = pids_by_comm(run(kReport + " script -i " + data).out);
  ASSERT_TRUE(comms.contains("hotcold"));
  EXPECT_EQ(comms.at("hotcold").size(), 2u);
  EXPECT_FALSE(comms.contains("ebprof-record")) << "sampled before its exec";
}

TEST(EndToEnd, RecordingsAreReadableOnlyByTheirOwnerAndQuietIsSilent) {
  REQUIRE_BPF();
  std::string data = temp_file("mode.data");
  Outcome rec = run(kRecord + " -q -o " + data + " -- " + kHotcold + " 0.2");
  ASSERT_EQ(rec.status, 0);
  EXPECT_EQ(rec.err, "");
  EXPECT_EQ(fs::status(data).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST(BadInput, RecordWithoutPrivilegesSaysWhatIsNeeded) {
  REQUIRE_BPF();
  Outcome r = run("setpriv --reuid=65534 --regid=65534 --clear-groups " + kRecord +
                  " --duration 1 -o " + temp_file("unpriv.data"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("permission denied"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("root"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

TEST(BadInput, RecordOfAMissingPidIsOneLine) {
  Outcome r = run(kRecord + " -p 1073741822 --duration 1 -o " + temp_file("x.data"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no process with pid 1073741822"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

TEST(BadInput, RecordToAnUnwritablePathIsOneLine) {
  Outcome r = run(kRecord + " --duration 1 -o /nonexistent-dir/x.data");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/nonexistent-dir"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-o"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

TEST(BadInput, RecordOfAMissingCommandIsOneLine) {
  REQUIRE_BPF();
  Outcome r = run(kRecord + " -o " + temp_file("nocmd.data") + " -- /nonexistent/command");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cannot run '/nonexistent/command'"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

// A fresh directory for one test.
fs::path fresh_dir(const std::string& name) {
  fs::path dir = temp_file(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// -o is never written through a link, nor into a device or FIFO: a root
// recorder must not create or overwrite what a planted link names, nor
// report success for a recording sent to /dev/null.
TEST(BadInput, RecordNeverWritesThroughALinkOrIntoADevice) {
  REQUIRE_BPF();
  const fs::path dir = fresh_dir("record_links");
  fs::create_symlink(dir / "target", dir / "dangling");
  std::ofstream(dir / "precious") << "precious";
  fs::create_symlink(dir / "precious", dir / "link");
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  for (const auto& [path, what] : std::vector<std::pair<std::string, std::string>>{
           {(dir / "dangling").string(), "symbolic link"},
           {(dir / "link").string(), "symbolic link"},
           {(dir / "fifo").string(), "FIFO"},
           {"/dev/null", "device"}}) {
    Outcome r = run("timeout 30 " + kRecord + " -q -o " + path + " -- /bin/true");
    EXPECT_EQ(r.status, 1) << path << ": " << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "target")) << "created through the dangling link";
  EXPECT_EQ(slurp((dir / "precious").string()), "precious");
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_FALSE(fs::exists(dir / "link.old"));
}

// A command that cannot run is found out before the output is touched:
// the previous recording keeps its name, and no .old appears.
TEST(BadInput, AMistypedCommandKeepsThePreviousRecording) {
  REQUIRE_BPF();
  const fs::path dir = fresh_dir("mistyped");
  const std::string out = (dir / "perf.data").string();
  std::ofstream(out) << "the previous recording";
  Outcome r = run(kRecord + " -q -o " + out + " -- ebprof-no-such-command --flag");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cannot run 'ebprof-no-such-command'"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_EQ(slurp(out), "the previous recording");
  EXPECT_FALSE(fs::exists(out + ".old"));
}

// The files a --switch-output recording left at `out`, oldest first.
std::vector<std::string> switched_files(const std::string& out) {
  std::vector<std::string> files;
  const fs::path dir = fs::path(out).parent_path();
  const std::string prefix = fs::path(out).filename().string() + ".";
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(prefix) && name != prefix + "old")
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The samples a recording holds, as info counts them.
uint64_t samples_in(const std::string& file) {
  const std::string info = run(kReport + " info " + file).out;
  const size_t at = info.find("\nsamples ");
  return at == std::string::npos ? 0 : std::stoull(info.substr(at + 9));
}

// A recording switched to a new file every second: each file a whole
// recording of its own (read alone: header, maps, symbols, end frame), the
// hot chains' shares right over all of them, and not a sample lost or
// counted twice at a switch.
TEST(EndToEnd, SwitchOutputLeavesWholeRecordingsThatAddUp) {
  REQUIRE_BPF();
  const fs::path dir = fresh_dir("switch_output");
  const std::string out = (dir / "perf.data").string();
  Outcome rec = run(kRecord + " -F 499 --switch-output=1s -o " + out + " -- " + kHotcold + " 6");
  ASSERT_EQ(rec.status, 0) << rec.err;
  const std::vector<std::string> files = switched_files(out);
  ASSERT_GE(files.size(), 5u) << rec.err;
  EXPECT_FALSE(fs::exists(out)) << "the last file is renamed too";
  uint64_t samples = 0;
  std::string inputs;
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    EXPECT_TRUE(std::regex_match(fs::path(f).filename().string(),
                                 std::regex(R"(perf\.data\.\d{16}(-\d+)?)")));
    Outcome info = run(kReport + " info " + f);
    EXPECT_EQ(info.err, "") << "a file of its own reads without a warning";
    EXPECT_NE(info.out.find("\nend "), std::string::npos) << info.out;
    samples += samples_in(f);
    inputs += " -i " + f;
  }
  std::smatch total;
  ASSERT_TRUE(std::regex_search(rec.err, total, std::regex(R"(\((\d+) samples)"))) << rec.err;
  EXPECT_EQ(samples, std::stoull(total[1])) << rec.err;
  // A middle file names the hot chains on its own.
  Shares middle = hotcold_shares(run(kReport + " -i " + files[2] + " --format folded").out);
  EXPECT_GT(middle.via_a, 0u);
  EXPECT_GT(middle.via_b, 0u);
  const std::string folded = run(kReport + inputs + " --format folded").out;
  Shares all = hotcold_shares(folded);
  ASSERT_GE(all.total, 1000u);
  EXPECT_NEAR(all.pct_a(), 70, 10);
  EXPECT_NEAR(all.pct_b(), 30, 10);
  // The files by their directory, by a pattern, or merged into one.
  EXPECT_EQ(run(kReport + " -i " + dir.string() + " --format folded").out, folded);
  EXPECT_EQ(run(kReport + " -i '" + out + ".*' --format folded").out, folded);
  const std::string day = temp_file("switched-day.data");
  Outcome merged = run(kReport + " merge -o " + day + " " + dir.string());
  ASSERT_EQ(merged.status, 0) << merged.err;
  EXPECT_EQ(run(kReport + " -i " + day + " --format folded").out, folded);

  // --switch-max-files keeps the newest; SIGUSR2 switches on demand.
  const fs::path kept = fresh_dir("switch_max");
  const std::string out2 = (kept / "perf.data").string();
  rec = run(kRecord + " -q --switch-output=1s --switch-max-files=2 -o " + out2 + " -- " + kHotcold +
            " 4");
  ASSERT_EQ(rec.status, 0) << rec.err;
  EXPECT_EQ(switched_files(out2).size(), 2u);
  const fs::path signalled = fresh_dir("switch_signal");
  const std::string out3 = (signalled / "perf.data").string();
  const pid_t pid = spawn({kRecord, "-q", "--switch-output", "-o", out3, "--", kHotcold, "2"});
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  kill(pid, SIGUSR2);
  EXPECT_EQ(wait_exit(pid), 0);
  const std::vector<std::string> two = switched_files(out3);
  ASSERT_EQ(two.size(), 2u);
  for (const std::string& f : two)
    EXPECT_GT(samples_in(f), 0u) << f;
}

// The first and last sample times of `comm` in a recording, in seconds.
std::pair<double, double> sample_span(const std::string& file, const std::string& comm) {
  std::istringstream in(run(kReport + " script -i " + file).out);
  double first = 0, last = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string name, ids, cpu, time;
    if (line.rfind(comm + " ", 0) != 0 || !(words >> name >> ids >> cpu >> time))
      continue;
    last = std::stod(time);
    first = first ? first : last;
  }
  return {first, last};
}

// --flight-recorder keeps the last DURATION in memory and writes it out on
// SIGUSR2, recording on, and once more when recording stops.
TEST(EndToEnd, FlightRecorderWritesTheLastSecondsWhenAsked) {
  REQUIRE_BPF();
  const fs::path dir = fresh_dir("flight");
  const std::string out = (dir / "x.data").string();
  const pid_t pid =
      spawn({kRecord, "-q", "-F", "499", "--flight-recorder=5s", "-o", out, "--", kHotcold, "20"});
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::seconds(11));
  kill(pid, SIGUSR2);
  std::this_thread::sleep_for(std::chrono::seconds(4));
  kill(pid, SIGUSR2);
  EXPECT_EQ(wait_exit(pid), 0);
  EXPECT_FALSE(fs::exists(out)) << "nothing but what is asked for reaches the disk";
  const std::vector<std::string> files = switched_files(out);
  ASSERT_EQ(files.size(), 3u) << "two asked for, one at the end";
  double previous_end = 0;
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    Outcome info = run(kReport + " info " + f);
    EXPECT_EQ(info.err, "") << "a whole recording";
    const auto [first, last] = sample_span(f, "hotcold");
    EXPECT_NEAR(last - first, 5, 1) << "the last 5 s";
    EXPECT_GT(last, previous_end + 0.5) << "each file newer than the last";
    previous_end = last;
    Shares s = hotcold_shares(run(kReport + " -i " + f + " --format folded").out);
    EXPECT_NEAR(s.pct_a(), 70, 12);
  }
}

// A process's resident set, in KiB.
uint64_t rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stoull(line.substr(6));
  return 0;
}

// Processes started on this machine since boot.
uint64_t processes_started() {
  std::ifstream in("/proc/stat");
  for (std::string word; in >> word;)
    if (word == "processes" && in >> word)
      return std::stoull(word);
  return 0;
}

// Always-on capture in accelerated form: system-wide with rotation while
// processes come and go by the hundred every second. The recorder's memory
// after the first minute is what it stays at: exited processes are let
// go, and the stack and symbol tables start afresh with each file.
TEST(Soak, RecorderMemoryStaysPutWhileProcessesComeAndGo) {
  REQUIRE_BPF();
  constexpr int kSeconds = 120;
  const fs::path dir = fresh_dir("soak");
  const std::string out = (dir / "soak.data").string();
  const pid_t recorder =
      spawn({kRecord, "-q", "-a", "-F", "999", "--switch-output=10s", "--switch-max-files=2",
             "--duration", std::to_string(kSeconds), "-o", out});
  ASSERT_GT(recorder, 0);
  const pid_t churn = spawn({"/bin/sh", "-c", "while :; do /bin/true; done"});
  ASSERT_GT(churn, 0);
  const uint64_t started = processes_started();
  std::this_thread::sleep_for(std::chrono::seconds(60));
  const uint64_t after_a_minute = rss_kib(recorder);
  std::this_thread::sleep_for(std::chrono::seconds(kSeconds - 65));
  const uint64_t at_the_end = rss_kib(recorder);
  const double per_second = double(processes_started() - started) / (kSeconds - 5);
  kill(churn, SIGKILL);
  wait_exit(churn);
  EXPECT_EQ(wait_exit(recorder), 0);
  std::printf("recorder RSS after the first minute: %.1f MB, at %d s: %.1f MB; %.0f processes/s\n",
              after_a_minute / 1024.0, kSeconds - 5, at_the_end / 1024.0, per_second);
  ASSERT_GT(after_a_minute, 0u);
  EXPECT_LE(at_the_end, after_a_minute * 1.15);
  EXPECT_GE(per_second, 200) << "the workload did not churn";
  EXPECT_EQ(switched_files(out).size(), 2u);
}

// A disk that fills at a switch (--switch-output): one clear line, every
// file switched before it whole; a rotation directory that cannot be
// written is refused before anything is recorded.
TEST(BadInput, AFullDiskAtASwitchKeepsTheFilesBeforeIt) {
  REQUIRE_BPF();
  fs::path dir = fs::path(testing::TempDir()) / "tiny-switch-fs";
  fs::create_directories(dir);
  umount2(dir.c_str(), MNT_DETACH);
  if (mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=28k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  const std::string out = (dir / "r.data").string();
  Outcome rec = run(kRecord + " -q -F 999 --switch-output=1s -o " + out + " -- " + kHotcold + " 6");
  const std::vector<std::string> files = switched_files(out);
  std::vector<Outcome> infos;
  for (const std::string& f : files)
    infos.push_back(run(kReport + " info " + f));
  umount2(dir.c_str(), MNT_DETACH);
  EXPECT_EQ(rec.status, 1) << rec.err;
  EXPECT_NE(rec.err.find("No space left on device"), std::string::npos) << rec.err;
  EXPECT_EQ(lines(rec.err), 1) << rec.err;
  ASSERT_GE(files.size(), 2u) << "the disk filled before the second switch";
  for (const Outcome& info : infos) {
    EXPECT_EQ(info.err, "") << "a whole recording";
    EXPECT_NE(info.out.find("\nend "), std::string::npos) << info.out;
  }

  if (mount("tmpfs", dir.c_str(), "tmpfs", MS_RDONLY, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a read-only tmpfs here: " << std::strerror(errno);
  rec = run(kRecord + " -q --switch-output=1s -o " + out + " -- " + kHotcold + " 1");
  umount2(dir.c_str(), MNT_DETACH);
  EXPECT_EQ(rec.status, 1);
  EXPECT_EQ(rec.err, "ebprof-record: cannot write to directory " + dir.string() +
                         ": Read-only file system: choose a writable path with -o\n");
}

// SIGUSR2 to a recorder that neither switches files nor keeps a flight
// recorder: one line, and the recording goes on to its end, whole (the
// signal's default would have killed it). With --switch-output=TIME it
// switches at once.
TEST(BadInput, Sigusr2WithoutSwitchingIsALineNotAnEnd) {
  REQUIRE_BPF();
  const std::string data = temp_file("usr2.data");
  const std::string err = temp_file("usr2.err");
  const pid_t pid =
      spawn({"/bin/sh", "-c",
             "exec " + kRecord + " -q -F 499 -o " + data + " -- " + kHotcold + " 1.5 2>" + err});
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kill(pid, SIGUSR2);
  EXPECT_EQ(wait_exit(pid), 0);
  EXPECT_EQ(slurp(err),
            "ebprof-record: SIGUSR2 ignored: it switches files only with --switch-output or "
            "--flight-recorder; recording goes on\n");
  Outcome info = run(kReport + " info " + data);
  EXPECT_EQ(info.err, "");
  EXPECT_NE(info.out.find("\nend "), std::string::npos) << info.out;
  EXPECT_GT(samples_in(data), 600u) << "recorded to the end";

  const fs::path dir = fresh_dir("usr2_time");
  const std::string out = (dir / "perf.data").string();
  const pid_t timed =
      spawn({kRecord, "-q", "--switch-output=1h", "-o", out, "--", kHotcold, "1.5"});
  ASSERT_GT(timed, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kill(timed, SIGUSR2);
  EXPECT_EQ(wait_exit(timed), 0);
  EXPECT_EQ(switched_files(out).size(), 2u) << "one at the signal, one at the end";
}

// What `go tool pprof -raw` says of a profile: its time (seconds since
// 1970), duration line and samples; time -1 when it could not read it.
struct RawPprof {
  int64_t time = -1;
  std::string duration;
  uint64_t samples = 0;
};

RawPprof raw_pprof(const std::string& pb) {
  Outcome raw = run("go tool pprof -raw " + pb);
  RawPprof out;
  if (raw.status != 0)
    return out;
  std::istringstream in(raw.out);
  const std::regex sample(R"(^ +(\d+) +\d+: )");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    tm t{};
    if (line.starts_with("Time: ") && strptime(line.c_str() + 6, "%Y-%m-%d %H:%M:%S", &t))
      out.time = timegm(&t);
    else if (line.starts_with("Duration: "))
      out.duration = line.substr(10);
    else if (std::regex_search(line, m, sample))
      out.samples += std::stoull(m[1]);
  }
  return out;
}

// --split: every slice reads in go tool pprof, the slices add up to the
// unsplit profile, and their times tile the recording, a second each.
TEST(EndToEnd, SplitSlicesAreProfilesThatTileTheRecording) {
  REQUIRE_BPF();
  if (run("go version").status != 0)
    GTEST_SKIP() << "go is not installed (apt-get install golang-go): no pprof client";
  const std::string data = temp_file("split.data"), all = temp_file("split-all.pb.gz");
  const fs::path dir = fresh_dir("split");
  ASSERT_EQ(run(kRecord + " -q -F 499 -o " + data + " -- " + kHotcold + " 3.5").status, 0);
  ASSERT_EQ(run(kReport + " -i " + data + " --format pprof -o " + all).status, 0);
  Outcome split = run(kReport + " -i " + data + " --format pprof --split 1s -o " + dir.string());
  ASSERT_EQ(split.status, 0) << split.err;
  const RawPprof whole = raw_pprof(all);
  ASSERT_GT(whole.samples, 1000u);
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 4u);
  uint64_t samples = 0;
  int64_t previous = -1;
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    const RawPprof slice = raw_pprof(f);
    ASSERT_GE(slice.time, 0) << "go tool pprof could not read it";
    EXPECT_EQ(slice.duration, "1s");
    if (previous >= 0) {
      EXPECT_EQ(slice.time, previous + 1) << "the next second: hotcold ran throughout";
    }
    previous = slice.time;
    samples += slice.samples;
  }
  EXPECT_EQ(samples, whole.samples);
  // The first slice holds the recording's start, the last its end.
  const int64_t start = raw_pprof(all).time;
  EXPECT_EQ(raw_pprof(files.front()).time, start);
  EXPECT_GE(previous, start + 3);
}

// --follow reads the recording as it grows: a table every second, the
// last once the end frame is in, with every sample the file holds.
TEST(EndToEnd, FollowRedrawsTheTopTableUntilTheRecordingEnds) {
  REQUIRE_BPF();
  const std::string data = temp_file("follow.data");
  fs::remove(data);
  const pid_t pid = spawn({kRecord, "-q", "-F", "499", "-o", data, "--", kHotcold, "3"});
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 100 && !fs::exists(data); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Outcome follow = run("timeout 30 " + kReport + " -i " + data + " --follow -n 5");
  EXPECT_EQ(wait_exit(pid), 0);
  EXPECT_EQ(follow.status, 0) << "ends with the recording";
  EXPECT_EQ(follow.err, "") << "a file still being written is not damage";
  std::vector<uint64_t> tables;
  const std::regex header(R"(# (\d+) samples of )");
  for (auto it = std::sregex_iterator(follow.out.begin(), follow.out.end(), header);
       it != std::sregex_iterator(); ++it)
    tables.push_back(std::stoull((*it)[1]));
  ASSERT_GE(tables.size(), 3u) << follow.out;
  EXPECT_TRUE(std::is_sorted(tables.begin(), tables.end())) << follow.out;
  EXPECT_EQ(tables.back(), samples_in(data));
  const std::string last = follow.out.substr(follow.out.rfind("samples of "));
  EXPECT_NE(last.find(kLeafChain), std::string::npos) << last;
}

// A recording whose recorder was killed has no end frame: --follow stops
// once the file has not grown for 30 s, with a line saying so, not never.
TEST(BadInput, FollowingARecordingThatStoppedGrowingEnds) {
  const std::string data = temp_file("killed.data");
  const std::string whole = slurp(std::string(EBPROF_TEST_DATA_DIR) + "/v1.2-hotcold.data");
  std::ofstream(data, std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() / 2);
  Outcome follow = run("timeout 60 " + kReport + " -i " + data + " --follow -n 3");
  EXPECT_EQ(follow.status, 1) << "not the timeout's 124";
  EXPECT_NE(follow.err.find("has not grown for 30 s and has no end frame"), std::string::npos)
      << follow.err;
  EXPECT_NE(follow.out.find("samples of "), std::string::npos) << "the table first";
}

// SIGTERM at any moment of the start (the BPF programs loading, the output
// being made) leaves either the previous recording as it was or a whole
// new one, never a header-only or damaged file.
TEST(BadInput, ASignalDuringTheStartLeavesThePreviousRecordingOrAWholeOne) {
  REQUIRE_BPF();
  const fs::path dir = fresh_dir("early_term");
  const std::string out = (dir / "perf.data").string();
  for (int delay_ms : {0, 2, 5, 10, 20, 40, 70, 100, 150, 250, 400}) {
    SCOPED_TRACE("SIGTERM after " + std::to_string(delay_ms) + " ms");
    std::ofstream(out, std::ios::trunc) << "the previous recording";
    const pid_t pid = spawn({kRecord, "-q", "-o", out, "--", "/bin/sleep", "5"});
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(pid, SIGTERM);
    const int status = wait_exit(pid);
    if (slurp(out) == "the previous recording") {
      EXPECT_NE(status, 0) << "stopped before recording, yet said nothing went wrong";
      continue;
    }
    EXPECT_EQ(status, 0);
    Outcome info = run(kReport + " info " + out);
    EXPECT_EQ(info.status, 0) << info.err;
    EXPECT_EQ(info.err, "") << "a recording stopped by SIGTERM is whole";
    EXPECT_NE(info.out.find("\nend "), std::string::npos) << info.out;
  }
}

// Neither merge's output nor report -o is written through a link: a link
// at the output is refused, one where merge used to write its partial
// file is left alone, and each output replaces an existing file whole.
TEST(BadInput, ReportOutputsNeverGoThroughALink) {
  const fs::path dir = fresh_dir("report_links");
  const std::string in = std::string(EBPROF_TEST_DATA_DIR) + "/v1.2-hotcold.data";
  const fs::path precious = dir / "precious";
  std::ofstream(precious) << "precious";
  const fs::path merged = dir / "merged.data";
  fs::create_symlink(precious, dir / "merged.data.partial");
  Outcome m = run(kReport + " merge -o " + merged.string() + " " + in + " " + in);
  EXPECT_EQ(m.status, 0) << m.err;
  EXPECT_EQ(slurp(precious.string()), "precious");
  Outcome folded = run(kReport + " -i " + merged.string() + " --format folded");
  EXPECT_EQ(folded.status, 0) << folded.err;
  EXPECT_FALSE(folded.out.empty());

  fs::create_symlink(precious, dir / "report.txt");
  for (const std::string& command :
       {kReport + " -i " + in + " -o " + (dir / "report.txt").string(),
        kReport + " merge -o " + (dir / "report.txt").string() + " " + in + " " + in}) {
    Outcome r = run(command);
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
  }
  EXPECT_EQ(slurp(precious.string()), "precious");

  const fs::path plain = dir / "plain.txt";
  std::ofstream(plain) << "a stale report that is longer than the new one would be, by far";
  Outcome top = run(kReport + " -i " + in);
  Outcome to_file = run(kReport + " -i " + in + " -o " + plain.string());
  EXPECT_EQ(to_file.status, 0) << to_file.err;
  EXPECT_EQ(slurp(plain.string()), top.out);
}

// Two recordings joined with cat read as two recordings, each named from
// its own tables: the same report as the two files given with -i.
TEST(BadInput, RecordingsJoinedWithCatReadAsTwoRecordings) {
  const std::string a = std::string(EBPROF_TEST_DATA_DIR) + "/v1.2-hotcold.data";
  const std::string b = std::string(EBPROF_TEST_DATA_DIR) + "/v1.2-offcpu-wakers.data";
  const std::string joined = temp_file("joined.data");
  std::ofstream(joined, std::ios::binary) << slurp(a) << slurp(b);
  for (const std::string flags : {"--format folded --prefix comm,pid", "--view wall -n 0"}) {
    Outcome both = run(kReport + " " + flags + " -i " + a + " -i " + b);
    Outcome cat = run(kReport + " " + flags + " -i " + joined);
    ASSERT_EQ(both.status, 0) << both.err;
    EXPECT_EQ(cat.status, 0) << cat.err;
    EXPECT_FALSE(cat.out.empty());
    // The top table's header repeats the reader's warning; the rest agrees.
    std::string table = cat.out;
    if (size_t w = table.find("# warning: " + joined); w != std::string::npos)
      table.erase(w, table.find('\n', w) + 1 - w);
    EXPECT_EQ(table, both.out) << flags;
    EXPECT_NE(cat.err.find("2 recordings joined end to end"), std::string::npos) << cat.err;
  }
}

TEST(BadInput, ReportOfAFileItCannotReadIsOneLine) {
  std::string empty = temp_file("empty.data"), text = temp_file("text.data");
  std::ofstream(empty).close();
  std::ofstream(text) << "hello, not a recording\n";
  const fs::path no_recordings = fresh_dir("no_recordings");
  for (const auto& [path, expected] : std::vector<std::pair<std::string, std::string>>{
           {temp_file("missing.data"), "cannot open"},
           {empty, "is empty"},
           {text, "not an ebprof recording"},
           {"'" + temp_file("rotated.data.*") + "'", "no file matches: check the pattern"},
           {"'" + text.substr(0, text.size() - 4) + "*'", "not an ebprof recording"},
           {no_recordings.string(), "holds no ebprof recording"}}) {
    Outcome r = run(kReport + " -i " + path);
    EXPECT_EQ(r.status, 1) << path;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// --version: the release and the commit built, one line, for bug reports.
TEST(EndToEnd, BothToolsSayTheirVersionAndCommit) {
  for (const auto& [tool, name] :
       {std::pair{kRecord, "ebprof-record"}, {kReport, "ebprof-report"}}) {
    Outcome v = run(tool + " --version");
    EXPECT_EQ(v.status, 0) << v.err;
    EXPECT_TRUE(v.out.starts_with(std::string(name) + " " + EBPROF_VERSION + " (commit ")) << v.out;
    EXPECT_EQ(lines(v.out), 1) << v.out;
  }
}

TEST(BadInput, UnknownOptionsAreOneLine) {
  for (const std::string& cmd : {kRecord + " --bogus", kReport + " --format nope"}) {
    Outcome r = run(cmd);
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_EQ(lines(r.err), 1) << r.err;
  }
}

// pprof's gzipped bytes are refused to a terminal, as gzip refuses them,
// and written where stdout goes otherwise.
TEST(BadInput, PprofToATerminalIsRefusedWithAHint) {
  if (!fs::exists("/usr/bin/script"))
    GTEST_SKIP() << "script(1) (util-linux) gives the report a terminal; it is not installed";
  const std::string data = std::string(EBPROF_TEST_DATA_DIR) + "/v1.2-hotcold.data";
  const std::string pprof = kReport + " -i " + data + " --format pprof";
  Outcome tty = run("/usr/bin/script -qec '" + pprof + "' /dev/null");
  EXPECT_NE(tty.status, 0) << tty.out;
  EXPECT_NE(tty.out.find("ebprof-report: --format pprof is binary, not for a terminal: write it "
                         "with -o FILE, or redirect it"),
            std::string::npos)
      << tty.out;
  Outcome piped = run(pprof);
  EXPECT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(piped.out.substr(0, 2), "\x1f\x8b") << "gzip";
  Outcome top = run("/usr/bin/script -qec '" + kReport + " -i " + data + "' /dev/null");
  EXPECT_EQ(top.status, 0) << top.out;
}

// The self share of `function` in a top table.
// The Children share of `function`'s row: samples with it anywhere.
double children_share(const std::string& top, const std::string& function) {
  std::istringstream rows(top);
  for (std::string line; std::getline(rows, line);)
    if (line.find("] " + function) != std::string::npos)
      return std::stod(line);
  return -1;
}

// diff of a recording against itself changes nothing; merge of two is what
// reading both with two -i gives, sample for sample.
TEST(EndToEnd, DiffAgainstItselfIsZeroAndMergeEqualsTwoInputs) {
  REQUIRE_BPF();
  std::string a = temp_file("diff-a.data"), b = temp_file("diff-b.data"),
              merged = temp_file("diff-merged.data");
  for (const std::string& data : {a, b}) {
    Outcome rec = run(kRecord + " -F 499 -o " + data + " -- " + kHotcold + " 1");
    ASSERT_EQ(rec.status, 0) << rec.err;
  }
  Outcome self = run(kReport + " diff " + a + " " + a + " -n 0");
  ASSERT_EQ(self.status, 0) << self.err;
  EXPECT_NE(self.out.find(kLeafChain), std::string::npos) << self.out;
  std::istringstream rows(self.out);
  for (std::string line; std::getline(rows, line);) {
    if (!line.starts_with("#")) {
      EXPECT_NE(line.find(" +0.00 "), std::string::npos) << line;
    }
  }
  Outcome folded = run(kReport + " diff " + a + " " + a + " --format folded");
  ASSERT_EQ(folded.status, 0) << folded.err;
  std::istringstream folded_lines(folded.out);
  for (std::string line; std::getline(folded_lines, line);) {
    // Names may hold spaces: the two counts are the last two fields.
    const size_t last = line.rfind(' '), before = line.rfind(' ', last - 1);
    EXPECT_EQ(line.substr(before + 1, last - before - 1), line.substr(last + 1)) << line;
  }

  Outcome merge = run(kReport + " merge -o " + merged + " " + a + " " + b);
  ASSERT_EQ(merge.status, 0) << merge.err;
  Outcome one = run(kReport + " -i " + merged + " -n 0");
  Outcome two = run(kReport + " -i " + a + " -i " + b + " -n 0");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.out, two.out);
  auto samples = [&](const std::string& data) {
    return std::stoull(run(kReport + " -i " + data + " -n 1").out.substr(2));
  };
  EXPECT_EQ(samples(merged), samples(a) + samples(b));
  EXPECT_GT(samples(a), 300u);
  Outcome info = run(kReport + " info " + merged);
  EXPECT_NE(info.out.find("source          1: " + b), std::string::npos) << info.out;
  Outcome clobber = run(kReport + " merge -o " + a + " " + a + " " + b);
  EXPECT_NE(clobber.status, 0);
  EXPECT_NE(clobber.err.find("is one of the recordings being merged"), std::string::npos)
      << clobber.err;
}

// The flame graph page in a real browser (Debian's chromium, headless): it
// runs without console errors, shows the root and the hot leaf, and its
// search reports the hot function's share, which is top's.
TEST(EndToEnd, FlameGraphPageWorksInAHeadlessBrowser) {
  REQUIRE_BPF();
  if (run("command -v chromium").status != 0)
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium): no browser to load "
                    "the page in";
  std::string data = temp_file("flame.data"), page = temp_file("flame.html"),
              diff = temp_file("flame-diff.html");
  Outcome rec = run(kRecord + " -F 499 -o " + data + " -- " + kHotcold + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  ASSERT_EQ(run(kReport + " -i " + data + " --format flamegraph -o " + page).status, 0);
  ASSERT_EQ(run(kReport + " diff " + data + " " + data + " --format flamegraph -o " + diff).status,
            0);
  const double share = children_share(run(kReport + " -i " + data + " -n 0").out, kLeafChain);
  ASSERT_GT(share, 50);

  fs::create_directories(EBPROF_ARTIFACTS);
  const std::string browser = headless_chromium();
  for (const std::string& file : {page, diff}) {
    const std::string url = "'file://" + file + "#search=hot_leaf'";
    Outcome dom = run(browser + "--dump-dom " + url);
    ASSERT_EQ(dom.status, 0) << dom.err;
    EXPECT_EQ(dom.err.find(":CONSOLE"), std::string::npos) << dom.err;
    EXPECT_NE(dom.out.find(">all</div>"), std::string::npos) << dom.out.substr(0, 4000);
    EXPECT_NE(dom.out.find(">" + kLeafChain + "</div>"), std::string::npos);
    const size_t matched = dom.out.find("id=\"matched\">Matched: ");
    ASSERT_NE(matched, std::string::npos);
    // The search sums the hot leaf's frames, wherever they are on a stack
    // (under an interrupt's kernel frames too): its Children share.
    if (file == page) {
      EXPECT_NEAR(std::stod(dom.out.substr(matched + 22)), share, 0.5)
          << dom.out.substr(matched, 80);
    }
    const std::string shot =
        std::string(EBPROF_ARTIFACTS) + "/" + fs::path(file).stem().string() + ".png";
    Outcome screenshot = run(browser + "--screenshot=" + shot + " " + url);
    EXPECT_EQ(screenshot.status, 0) << screenshot.err;
    EXPECT_GT(fs::file_size(shot), 5000u);
  }

  // A graph taller than the window (127 frames of recursion, some 1,900
  // pixels) opens showing its root, and is titled for what it shows.
  const std::string tall_data = temp_file("flame-tall.data"), tall = temp_file("flame-tall.html");
  ASSERT_EQ(run(kRecord + " -F 499 -o " + tall_data + " -- " + kWithfp + " --deep 0.5").status, 0);
  ASSERT_EQ(run(kReport + " -i " + tall_data + " --format flamegraph -o " + tall).status, 0);
  Outcome dom = run(browser + "--dump-dom 'file://" + tall + "'");
  ASSERT_EQ(dom.status, 0) << dom.err;
  auto attribute = [&](const std::string& name) {
    const size_t at = dom.out.find(name + "=\"");
    return at == std::string::npos ? -1 : std::stol(dom.out.substr(at + name.size() + 2));
  };
  const long bottom = attribute("data-root-bottom"), view = attribute("data-view-height");
  ASSERT_GT(view, 0) << dom.out.substr(0, 2000);
  EXPECT_GT(bottom, 0);
  EXPECT_LE(bottom, view) << "the root is below the fold";
  EXPECT_NE(dom.out.find("Flame graph: cpu-clock on "), std::string::npos);
  EXPECT_NE(dom.out.find(" samples over "), std::string::npos);
}

// Microseconds of the folded lines (--weight time) that contain all of
// `pieces`.
uint64_t folded_us(const std::string& folded, std::vector<std::string> pieces) {
  uint64_t us = 0;
  std::istringstream in(folded);
  for (std::string line; std::getline(in, line);)
    if (std::all_of(pieces.begin(), pieces.end(),
                    [&](const std::string& p) { return line.find(p) != std::string::npos; }))
      us += std::stoull(line.substr(line.rfind(' ') + 1));
  return us;
}

// What the offcpu workload says of a thread: its tid and lifetime.
std::pair<std::string, double> thread_life(const std::string& out, const std::string& name) {
  std::istringstream in(out);
  for (std::string who, tid; in >> who >> tid;) {
    double seconds = 0;
    in >> seconds;
    if (who == name)
      return {tid, seconds};
  }
  ADD_FAILURE() << "no " << name << " in: " << out;
  return {"0", 0};
}

// --off-cpu: blocked time lands on the functions that blocked and the
// kernel paths they blocked in, within 10% of the truth, also for a
// process that exited before the recording ended.
TEST(EndToEnd, OffCpuTimeLandsOnTheFunctionsThatBlocked) {
  REQUIRE_BPF();
  std::string data = temp_file("offcpu.data");
  Outcome rec =
      run(kRecord + " --off-cpu-only -o " + data + " -- sh -c '" + kOffCpu + " 2; sleep 0.5'");
  ASSERT_EQ(rec.status, 0) << rec.err;
  const auto [sleeper, sleeper_s] = thread_life(rec.out, "sleeper");
  const auto [reader, reader_s] = thread_life(rec.out, "reader");
  Outcome info = run(kReport + " info " + data);
  EXPECT_NE(info.out.find("off-cpu         through "), std::string::npos) << info.out;

  Outcome folded = run(kReport + " -i " + data + " --format folded");
  ASSERT_EQ(folded.status, 0) << folded.err;
  // Blocked all its life but for a few microseconds on CPU at each wakeup.
  const double slept = folded_us(folded.out, {"[off-cpu: S sleeping]", "sleep_100ms",
                                              "do_nanosleep", "__schedule"}) /
                       1e6;
  EXPECT_NEAR(slept, sleeper_s, 0.1 * sleeper_s) << folded.out;
  const double read =
      folded_us(folded.out, {"[off-cpu: S sleeping]", "read_pipe", "pipe_read", "__schedule"}) /
      1e6;
  EXPECT_NEAR(read, reader_s, 0.1 * reader_s) << folded.out;
  // pprof: an off_cpu/nanoseconds type that go tool pprof reads, with the
  // same time on the sleeping function.
  if (run("go version").status == 0) {
    std::string pb = temp_file("offcpu.pb.gz");
    ASSERT_EQ(run(kReport + " -i " + data + " --format pprof -o " + pb).status, 0);
    Outcome cum = run("go tool pprof -top -cum -unit=ms -sample_index=off_cpu " + pb);
    ASSERT_EQ(cum.status, 0) << cum.err;
    double ms = -1;
    std::istringstream rows(cum.out);
    for (std::string line; std::getline(rows, line);)
      if (line.ends_with("::sleep_100ms()")) {
        std::istringstream fields(line);
        std::string flat, flat_pct, sum_pct, cum_ms;
        fields >> flat >> flat_pct >> sum_pct >> cum_ms;
        ms = std::stod(cum_ms);
      }
    EXPECT_NEAR(ms / 1e3, slept, 0.01 * slept) << cum.out;
  }
  // script prints intervals as perf's offcpu-time events, state in the name.
  Outcome script = run(kReport + " -i " + data + " --format script --tid " + sleeper);
  EXPECT_NE(script.out.find(" offcpu-time-S:\n"), std::string::npos) << script.out.substr(0, 2000);
  // Per thread, through the filters, as for samples: the sleeper's time is
  // its sleeps (but for a few microseconds of start-up).
  Outcome one = run(kReport + " -i " + data + " --format folded --tid " + sleeper);
  EXPECT_GT(folded_us(one.out, {"sleep_100ms"}), 0.99 * folded_us(one.out, {})) << one.out;
  EXPECT_EQ(folded_us(one.out, {"read_pipe"}), 0u) << one.out;
}

// --view wall: a thread's samples on CPU and intervals off CPU add up to
// its lifetime.
TEST(EndToEnd, WallViewOfAThreadAddsUpToItsLifetime) {
  REQUIRE_BPF();
  std::string data = temp_file("wall.data");
  Outcome rec = run(kRecord + " --off-cpu -F 999 -o " + data + " -- " + kOffCpu + " 1.5");
  ASSERT_EQ(rec.status, 0) << rec.err;
  for (const char* name : {"sleeper", "reader"}) {
    const auto [tid, lifetime] = thread_life(rec.out, name);
    Outcome top = run(kReport + " -i " + data + " --view wall --tid " + tid + " -n 1");
    ASSERT_EQ(top.status, 0) << top.err;
    ASSERT_TRUE(top.out.starts_with("# ")) << top.out;
    const double seconds = std::stod(top.out.substr(2));
    EXPECT_NEAR(seconds, lifetime, 0.05 * lifetime) << name << "\n" << top.out;
  }
  // Without --view, the on-CPU samples alone: a sliver of that.
  Outcome on = run(kReport + " -i " + data + " --format folded");
  EXPECT_EQ(on.out.find("[off-cpu"), std::string::npos) << on.out;
}

// Each way of seeing switches, forced, sees the same sleeps; info names it.
// A kernel that lacks one (tp_btf needs BTF tracing programs) is said so.
TEST(EndToEnd, EachSwitchHookSeesTheSameSleeps) {
  REQUIRE_BPF();
  std::string data = temp_file("hook.data");
  // What auto picks; tp_btf may be missing only when auto did not pick it.
  ASSERT_EQ(run(kRecord + " --off-cpu-only -o " + data + " -- " + kOffCpu + " 0.1").status, 0);
  const bool has_btf =
      run(kReport + " info " + data).out.find("through tp_btf") != std::string::npos;
  for (const char* hook : {"tp_btf", "raw_tp", "tracepoint"}) {
    Outcome rec = run(kRecord + " --off-cpu-only --wakers --off-cpu-hook " + hook + " -o " + data +
                      " -- " + kOffCpu + " 1");
    if (std::string(hook) == "tp_btf" && !has_btf) {
      EXPECT_NE(rec.err.find("this kernel does not attach it"), std::string::npos) << rec.err;
      std::cout << "[  SKIPPED ] tp_btf: this kernel does not attach it\n";
      continue;
    }
    ASSERT_EQ(rec.status, 0) << hook << ": " << rec.err;
    const double lifetime = thread_life(rec.out, "sleeper").second;
    Outcome info = run(kReport + " info " + data);
    EXPECT_NE(info.out.find(std::string("through ") + hook), std::string::npos) << info.out;
    Outcome folded = run(kReport + " -i " + data + " --format folded");
    // The state each hook decodes its own way: sleeping, here.
    const double slept =
        folded_us(folded.out, {"[off-cpu: S sleeping]", "sleep_100ms", "do_nanosleep"}) / 1e6;
    EXPECT_NEAR(slept, lifetime, 0.1 * lifetime) << hook << "\n" << folded.out;
    // And each hook's wakeup program: the feeder ends the reader's waits.
    Outcome woken = run(kReport + " -i " + data + " --wakers --format folded");
    const double reader = thread_life(rec.out, "reader").second;
    EXPECT_NEAR(folded_us(woken.out, {"read_pipe", ";--;", "feed_pipe"}) / 1e6, reader,
                0.1 * reader)
        << hook << "\n"
        << woken.out;
  }
}

// What --state and --min-block leave out is never recorded; -C with perf
// buffers loses nothing, though intervals end on any CPU.
TEST(EndToEnd, OffCpuFiltersShapeWhatIsRecorded) {
  REQUIRE_BPF();
  std::string data = temp_file("offcpu-filters.data");
  Outcome rec = run(kRecord + " --off-cpu-only --state S --min-block 150000 -o " + data + " -- " +
                    kOffCpu + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  Outcome folded = run(kReport + " -i " + data + " --format folded");
  ASSERT_EQ(folded.status, 0) << folded.err;
  // Sleeps of 100 ms and pipe waits of 50 ms are shorter than 150 ms; the
  // main thread's join of about a second is not.
  EXPECT_EQ(folded_us(folded.out, {"sleep_100ms"}), 0u) << folded.out;
  EXPECT_EQ(folded_us(folded.out, {"read_pipe"}), 0u) << folded.out;
  EXPECT_GT(folded_us(folded.out, {"[off-cpu: S sleeping]"}), 900'000u) << folded.out;
  EXPECT_EQ(folded.out.find("[off-cpu: R"), std::string::npos) << folded.out;

  Outcome perfbuf = run(kRecord + " --off-cpu-only --transport perfbuf -C 0 -o " + data + " -- " +
                        kOffCpu + " 1");
  ASSERT_EQ(perfbuf.status, 0) << perfbuf.err;
  Outcome info = run(kReport + " info " + data);
  EXPECT_NE(info.out.find("lost            0\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("intervals off CPU"), std::string::npos) << info.out;

  Outcome bad = run(kRecord + " --state S -o " + data + " -- " + kOffCpu + " 0.1");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("add --off-cpu"), std::string::npos) << bad.err;
}

// --wakers: the reader's waits on the pipe were ended by the feeder's
// writes, and the report shows so, offwaketime-style.
TEST(EndToEnd, WakersShowWhoEndedEachWait) {
  REQUIRE_BPF();
  std::string data = temp_file("wakers.data");
  Outcome rec = run(kRecord + " --off-cpu-only --wakers -o " + data + " -- " + kOffCpu + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  const double reader_s = thread_life(rec.out, "reader").second;
  Outcome folded = run(kReport + " -i " + data + " --wakers --format folded");
  ASSERT_EQ(folded.status, 0) << folded.err;
  // Nearly all the reader's wait was ended by the feeder's write.
  const double woken = folded_us(folded.out, {"read_pipe", ";--;", "feed_pipe"}) / 1e6;
  EXPECT_NEAR(woken, reader_s, 0.1 * reader_s) << folded.out;
  // Each waker is taken in its own context, inside try_to_wake_up() (where
  // its stack is cut), never in the IPI that activates a wakee on an idle
  // CPU, whose stack still holds the tracing glue.
  EXPECT_EQ(folded.out.find("bpf_trace_run"), std::string::npos) << folded.out;
  // Without --wakers the report shows no waker.
  Outcome plain = run(kReport + " -i " + data + " --format folded");
  EXPECT_EQ(plain.out.find(";--;"), std::string::npos) << plain.out;
}

// --call-graph dwarf. The samples of folded output whose stack holds
// `path` (frames root first, ';'-joined), and all of `comm`'s samples.
struct PathCount {
  uint64_t with = 0, total = 0;
  double share() const { return total ? 100.0 * with / total : 0; }
};

PathCount count_path(const std::string& folded, const std::string& comm, const std::string& path) {
  PathCount c;
  std::istringstream in(folded);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(comm + ";"))
      continue;
    const uint64_t n = std::stoull(line.substr(line.rfind(' ') + 1));
    c.total += n;
    if (line.find(path) != std::string::npos)
      c.with += n;
  }
  return c;
}

std::string repeat(const std::string& frame, int times) {
  std::string out;
  for (int i = 0; i < times; ++i)
    out += frame + ";";
  return out;
}

// nofp's full call path under `caller`: main down to the leaf in the library.
std::string nofp_path(const std::string& caller) {
  return "main;(anonymous namespace)::" + caller + "();" +
         repeat("(anonymous namespace)::recurse(int, unsigned long)", 13) +
         repeat("nofp_chain", 9) + "nofp_spin ";
}

// A program and a library built without frame pointers: the frame-pointer
// walk gets nowhere, DWARF unwinding gets the whole path in (nearly) every
// sample, with the callers' true shares.
TEST(Dwarf, FullStacksThroughCodeWithoutFramePointers) {
  REQUIRE_BPF();
  const std::string fp = temp_file("nofp-fp.data"), dwarf = temp_file("nofp-dwarf.data");
  ASSERT_EQ(run(kRecord + " -F 999 -o " + fp + " -- " + kNofp + " 2").status, 0);
  Outcome rec = run(kRecord + " -F 999 --call-graph dwarf -o " + dwarf + " -- " + kNofp + " 2");
  ASSERT_EQ(rec.status, 0) << rec.err;
  const std::string folded = run(kReport + " -i " + dwarf + " --format folded").out;
  const PathCount a = count_path(folded, "nofp", nofp_path("work_a"));
  const PathCount b = count_path(folded, "nofp", nofp_path("work_b"));
  ASSERT_GT(a.total, 1500u) << folded;
  EXPECT_GE(a.with + b.with, 0.99 * a.total) << folded;
  EXPECT_NEAR(a.share(), 70, 5) << folded;
  // The problem it solves: frame pointers find no whole path at all.
  const std::string fp_folded = run(kReport + " -i " + fp + " --format folded").out;
  EXPECT_LT(count_path(fp_folded, "nofp", "main;(anonymous namespace)::work_").share(), 5)
      << fp_folded;
  Outcome info = run(kReport + " info " + dwarf);
  EXPECT_NE(info.out.find("call graph      dwarf, windows of up to 8192 bytes"), std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("elf-cfi"), std::string::npos) << info.out;
}

// Another machine, or the binaries gone: the embedded call frame
// information and symbols unwind and name the stacks the same.
TEST(Dwarf, StacksUnwindTheSameWithTheBinariesDeleted) {
  REQUIRE_BPF();
  const fs::path dir = fs::path(testing::TempDir()) / "dwarf-deleted";
  fs::create_directories(dir);
  fs::copy_file(kNofp, dir / "nofp", fs::copy_options::overwrite_existing);
  fs::copy_file(kNofpLib, dir / fs::path(kNofpLib).filename(),
                fs::copy_options::overwrite_existing);
  const std::string data = temp_file("dwarf-deleted.data");
  Outcome rec =
      run("LD_LIBRARY_PATH=" + dir.string() + " " + kRecord + " -F 499 --call-graph dwarf -o " +
          data + " -- " + (dir / "nofp").string() + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  // Without the embedded tables, the same once the binaries are gone
  // says why it cannot unwind, never a made-up frame.
  const std::string bare = temp_file("dwarf-deleted-bare.data");
  ASSERT_EQ(run("LD_LIBRARY_PATH=" + dir.string() + " " + kRecord +
                " -F 499 --call-graph dwarf --no-embed-symbols -o " + bare + " -- " +
                (dir / "nofp").string() + " 1")
                .status,
            0);
  // Inlined frames need DWARF, which the recording does not carry (glibc's
  // atof, inlined into main, shows only while the binary is there): the
  // names compared are the symbols'.
  const std::string folded = " -i " + data + " --format folded --no-inline";
  const std::string before = run(kReport + folded).out;
  fs::remove_all(dir);
  // An address no symbol covers (the PLT, start-up code) is unnamed either
  // way; only the table its reason names differs.
  const std::string after = std::regex_replace(
      run(kReport + folded).out, std::regex(", no symbol in the embedded table\\)"), ")");
  EXPECT_EQ(after, before);
  EXPECT_GE(count_path(after, "nofp", "::recurse(int, unsigned long);").share(), 99) << after;
  EXPECT_EQ(run(kReport + " info " + bare).out.find("elf-cfi"), std::string::npos);
  const std::string gone = run(kReport + " -i " + bare + " --format folded").out;
  EXPECT_EQ(count_path(gone, "nofp", "recurse").with, 0u) << gone;
  EXPECT_GE(count_path(gone, "nofp", "nofp;[truncated: no CFI for an address];").share(), 95)
      << gone;
}

// A stack deeper than the window: without frame pointers it ends in a
// root that says the window was too small; with them the walk continues on
// the recorded frame-pointer chain, as far as it goes (to main: libc's
// start-up frames have none). Never a frame of anything else.
TEST(Dwarf, AStackDeeperThanTheWindowSaysSoOrJoinsTheFramePointerChain) {
  REQUIRE_BPF();
  for (const std::string& binary : {kNofp, kWithfp}) {
    const std::string data = temp_file("dwarf-deep.data");
    Outcome rec =
        run(kRecord + " -F 499 --call-graph dwarf -o " + data + " -- " + binary + " --deep 1");
    ASSERT_EQ(rec.status, 0) << rec.err;
    const std::string comm = fs::path(binary).filename().string();
    const std::string folded = run(kReport + " -i " + data + " --format folded --user-only").out;
    const std::string descend = "(anonymous namespace)::descend(int)";
    const PathCount deep = count_path(folded, comm, descend + ";" + descend + ";" + descend + ";");
    ASSERT_GT(deep.total, 300u) << folded;
    EXPECT_GE(deep.share(), 95) << folded;
    const PathCount cut = count_path(
        folded, comm, comm + ";[truncated: stack window too small (--call-graph dwarf,8192)]");
    if (binary == kNofp)
      EXPECT_GE(cut.share(), 95) << folded;
    else
      EXPECT_LE(cut.with, 2u) << folded;
    std::istringstream lines(folded);
    for (std::string line; std::getline(lines, line);) {
      // With frame pointers, a window runs short only where they end too:
      // in libc's start-up frames, below main, when the window's end falls
      // there. Never above main.
      if (binary == kWithfp && line.find("window too small") != std::string::npos) {
        EXPECT_NE(line.find(";main;(anonymous namespace)::deep();"), std::string::npos) << line;
      }
      if (!line.starts_with(comm + ";") || line.find(descend) == std::string::npos)
        continue;
      std::istringstream frames(line.substr(0, line.rfind(' ')));
      for (std::string f; std::getline(frames, f, ';');)
        EXPECT_TRUE(f == comm || f == descend || f == "(anonymous namespace)::deep()" ||
                    f == "main" || f == "nofp_spin" || f.starts_with("[truncated: ") ||
                    f.starts_with("_"))
            << f << " in " << line;
    }
  }
}

// An independent check of the unwinder: on code built with frame pointers,
// the DWARF-unwound frames of every sample are the frame-pointer walk's,
// frame for frame, up to main (below, libc has no frame pointers).
TEST(Dwarf, AgreesFrameForFrameWithTheFramePointerWalk) {
  REQUIRE_BPF();
  const std::string data = temp_file("dwarf-agree.data");
  ASSERT_EQ(
      run(kRecord + " -F 499 --call-graph dwarf -o " + data + " -- " + kHotcold + " 1").status, 0);
  auto up_to_main = [](const std::string& script) {
    std::vector<std::string> samples;
    std::istringstream in(script);
    std::string current;
    bool cut = false;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) {
        samples.push_back(current);
        current.clear();
        cut = false;
      } else if (line[0] == '\t' && !cut) {
        current += line + "\n";
        cut = line.find(" main+") != std::string::npos;
      } else if (line[0] != '\t') {
        current = line + "\n";
      }
    }
    return samples;
  };
  const auto dwarf = up_to_main(run(kReport + " -i " + data + " --format script").out);
  const auto fp = up_to_main(run(kReport + " -i " + data + " --format script --unwind fp").out);
  ASSERT_EQ(dwarf.size(), fp.size());
  size_t agree = 0, through_main = 0;
  for (size_t i = 0; i < dwarf.size(); ++i) {
    if (fp[i].find(" main+") == std::string::npos)
      continue;  // an interrupt's kernel stack alone, or the loader
    ++through_main;
    agree += dwarf[i] == fp[i];
  }
  ASSERT_GT(through_main, 400u);
  EXPECT_GE(agree, 0.99 * through_main);
}

// Frame-pointer code spending its time in libc, which has no frame
// pointers: the leaf's caller, which a frame-pointer walk skips, is named in
// both modes, on CPU (memcpy, memset) and off (nanosleep, read); with
// frame pointers also through frameless libc calling itself (nanosleep
// calls clock_nanosleep).
TEST(Dwarf, TheCallerOfAFramelessLibcLeafIsNamed) {
  REQUIRE_BPF();
  for (const std::string mode : {"", "--call-graph dwarf "}) {
    const std::string data = temp_file("libcleaf.data");
    Outcome rec = run(kRecord + " --off-cpu " + mode + "-o " + data + " -- " + kLibcleaf + " 2");
    ASSERT_EQ(rec.status, 0) << rec.err;
    const std::string on_cpu = run(kReport + " -i " + data + " --format folded").out;
    const std::string off_cpu = run(kReport + " -i " + data + " --format folded --view offcpu").out;
    struct Caller {
      const std::string& folded;
      std::string comm, frame;
    };
    for (const Caller& c :
         {Caller{on_cpu, "copier", "copy_buffers()"}, Caller{on_cpu, "clearer", "clear_buffers()"},
          Caller{off_cpu, "napper", "nap()"}, Caller{off_cpu, "reader", "wait_pipe(int)"}}) {
      // Below the lambda that calls it, and just once: nothing made up.
      const std::string path = "operator();(anonymous namespace)::" + c.frame + ";";
      const PathCount n = count_path(c.folded, c.comm, path);
      ASSERT_GT(n.total, 0u) << mode << c.comm << "\n" << c.folded;
      EXPECT_GE(n.share(), 95) << mode << c.comm << "\n" << c.folded;
      EXPECT_EQ(count_path(c.folded, c.comm, c.frame + ";(anonymous").with, 0u) << c.folded;
    }
    // libc's read, named as perf names it, once: with libc6-dbg its DWARF
    // has the function inlined into itself (read;__GI___libc_read).
    EXPECT_GE(count_path(off_cpu, "reader", "wait_pipe(int);read;").share(), 95) << off_cpu;
    EXPECT_EQ(off_cpu.find("__GI_"), std::string::npos) << off_cpu;
  }
}

}  // namespace
