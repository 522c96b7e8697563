// End-to-end, recording: what ebprof-record samples (a command and its
// children, a pid, a thread, CPUs, a cgroup, other events, probes), how it
// stops, and the names it keeps for what it sampled.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/e2e/e2e_support.h"

namespace ebprof::e2e {
namespace {

const std::string kShortlived = EBPROF_SHORTLIVED_BIN;
const std::string kTwoThreads = EBPROF_TWO_THREADS_BIN;
const std::string kDlopenHost = EBPROF_DLOPEN_HOST_BIN;
const std::string kJit = EBPROF_JIT_BIN;
const std::string kFaults = EBPROF_FAULTS_BIN;

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

// A runtime that writes its perf map only as it exits (the JVM with
// -XX:+DumpPerfMapAtExit): the recorder reads the map once more when the
// process is gone, for the code it could not name; a report made in the
// same boot finds a map the recording lacks where the process left it.
TEST(EndToEnd, JitCodeIsNamedFromAMapWrittenAtExit) {
  REQUIRE_BPF();
#if !defined(__x86_64__)
  GTEST_SKIP() << "the JIT workload generates x86-64 code";
#endif
  auto jitted_share = [](const std::string& data) {
    uint64_t jitted = 0, total = 0;
    for (const TopRow& row : top_rows(data)) {
      total += row.samples;
      jitted += row.symbol == "jitted_spin" && row.dso.starts_with("perf-") ? row.samples : 0;
    }
    return total ? double(jitted) / double(total) : 0.0;
  };
  // Recorded while it runs, then gone: named at the end.
  const std::string data = temp_file("jit-at-exit.data");
  Outcome rec = run(kRecord + " -F 999 -o " + data + " -- " + kJit + " 1 --map-at-exit");
  ASSERT_EQ(rec.status, 0) << rec.err;
  fs::remove(rec.out.substr(0, rec.out.find('\n')));
  EXPECT_GE(jitted_share(data), 0.9);

  // The recorder stopped before the process wrote its map: the report, in
  // this boot, reads the map the process left, and says so.
  const pid_t pid = spawn({kJit, "2", "--map-at-exit"});
  ASSERT_GT(pid, 0);
  const std::string early = temp_file("jit-before-exit.data");
  Outcome part =
      run(kRecord + " -q -F 999 -p " + std::to_string(pid) + " --duration 1 -o " + early);
  ASSERT_EQ(part.status, 0) << part.err;
  Outcome before = run(kReport + " -i " + early + " -n 3");
  EXPECT_NE(before.out.find("JIT map missing"), std::string::npos) << before.out;
  EXPECT_NE(before.out.find("-XX:+DumpPerfMapAtExit"), std::string::npos)
      << "the footer names what writes a map: " << before.out;
  EXPECT_EQ(wait_exit(pid), 0);
  const std::string map = "/tmp/perf-" + std::to_string(pid) + ".map";
  ASSERT_TRUE(fs::exists(map));
  Outcome after = run(kReport + " -i " + early + " -n 3");
  EXPECT_NE(after.err.find(map + " names process " + std::to_string(pid)), std::string::npos)
      << after.err;
  EXPECT_GE(jitted_share(early), 0.9);
  fs::remove(map);
}

// The JVM writes its perf map at exit with -XX:+DumpPerfMapAtExit: its
// methods named as perf names them (98% in Hot.hotLoop on this machine).
TEST(EndToEnd, JavaMethodsAreNamedFromTheMapTheJvmWritesAtExit) {
  REQUIRE_BPF();
  if (run("command -v javac && command -v java").status != 0)
    GTEST_SKIP() << "no JDK: apt-get install openjdk-17-jdk-headless (scripts/setup.sh --test)";
  const fs::path dir = temp_file("jvm");
  fs::create_directories(dir);
  Outcome javac = run("javac -d " + dir.string() + " " + EBPROF_HOT_JAVA);
  ASSERT_EQ(javac.status, 0) << javac.err;
  const std::string data = (dir / "java.data").string();
  Outcome rec = run(kRecord + " -q -F 999 -o " + data +
                    " -- sh -c 'echo $$; exec java -XX:+UnlockDiagnosticVMOptions "
                    "-XX:+DumpPerfMapAtExit -cp " +
                    dir.string() + " Hot 2'");
  ASSERT_EQ(rec.status, 0) << rec.err;
  fs::remove("/tmp/perf-" + rec.out.substr(0, rec.out.find('\n')) + ".map");
  uint64_t hot = 0, total = 0;
  for (const TopRow& row : top_rows(data)) {
    total += row.samples;
    hot += row.symbol.find("Hot.hotLoop") != std::string::npos ? row.samples : 0;
  }
  EXPECT_GT(total, 1000u);
  EXPECT_GE(hot, 0.8 * total) << hot << " of " << total;
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
// -F max system-wide on busy CPUs: a reader slower than the programs must
// still see the command end (it drained for as long as they ran: forever,
// issue 26), count what it lost and leave a whole recording.
TEST(EndToEnd, TheHighestRateStopsWhenTheCommandEnds) {
  REQUIRE_BPF();
  const std::string data = temp_file("max.data");
  const pid_t a = spawn({kHotcold, "8"}), b = spawn({kHotcold, "8"});
  Outcome rec = run("timeout 40 " + kRecord + " -a -F max -o " + data + " -- sleep 1");
  wait_exit(a);
  wait_exit(b);
  ASSERT_EQ(rec.status, 0) << "124: still draining after 40 s\n" << rec.err;
  Outcome info = run(kReport + " info " + data);
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(info.err, "") << "a whole recording";
}

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

// The function symbols of this machine's vDSO, [start, end) from its
// start: the same kernel's as every process's, read from python3's own.
std::vector<std::pair<uint64_t, uint64_t>> vdso_functions() {
  const std::string image = temp_file("vdso.so");
  const Outcome dumped =
      run("python3 -c 'import re\n"
          "m = re.search(r\"(\\w+)-(\\w+) .*\\[vdso\\]\", "
          "open(\"/proc/self/maps\").read())\n"
          "a, b = int(m[1], 16), int(m[2], 16)\n"
          "f = open(\"/proc/self/mem\", \"rb\"); f.seek(a)\n"
          "open(\"" +
          image + "\", \"wb\").write(f.read(b - a))'");
  EXPECT_EQ(dumped.status, 0) << dumped.err;
  std::vector<std::pair<uint64_t, uint64_t>> functions;
  std::istringstream symbols(run("readelf -W --dyn-syms " + image).out);
  for (std::string line; std::getline(symbols, line);) {
    std::istringstream fields(line);
    std::string num, value, size, type;
    if (fields >> num >> value >> size >> type && type == "FUNC") {
      const uint64_t start = std::stoull(value, nullptr, 16);
      functions.emplace_back(start, start + std::stoull(size, nullptr, 0));
    }
  }
  return functions;
}

// The vDSO, an ELF image with no file, is named as perf names it: the
// recorder embeds its symbols by its build-id, from its own copy. Where a
// kernel's vDSO has code outside every symbol it exports (a local clock
// reader), that code alone is unnamed.
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
  const std::vector<std::pair<uint64_t, uint64_t>> functions = vdso_functions();
  ASSERT_FALSE(functions.empty());
  const std::regex unnamed(R"(\[unknown\] \(\[vdso\]\+0x([0-9a-f]+))");
  for (std::sregex_iterator it(top.begin(), top.end(), unnamed), end; it != end; ++it) {
    const uint64_t offset = std::stoull((*it)[1], nullptr, 16);
    for (const auto& [start, stop] : functions)
      EXPECT_FALSE(offset >= start && offset < stop) << "unnamed inside a symbol: " << (*it)[0];
  }
}

// -e and -c like perf: a software event every N events; a hardware event
// works where a PMU exists and is one clear line where it does not.
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

// At -F the kernel adapts a software event's period to its rate: a burst of
// page faults is a few samples of many faults each. Weighed by period as
// perf weighs, each function's share is its share of the faults; counted by
// samples the top table disagreed with perf's.
TEST(EndToEnd, SamplesOfAnAdaptedPeriodWeighTheirEvents) {
  REQUIRE_BPF();
  const std::string data = temp_file("weighed-faults.data");
  Outcome rec = run(kRecord + " -e page-faults -F 4000 -o " + data + " -- " + kFaults + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(rec.out, m, std::regex("trickle (\\d+)\nburst (\\d+)"))) << rec.out;
  const double trickle = std::stod(m[1]), burst = std::stod(m[2]);

  // The faults under each function, from the folded stacks' counts.
  auto faults_in = [](const std::string& folded, const std::string& function) {
    uint64_t n = 0;
    std::istringstream in(folded);
    for (std::string line; std::getline(in, line);)
      if (line.find("::" + function + "(") != std::string::npos)
        n += std::stoull(line.substr(line.rfind(' ') + 1));
    return n;
  };
  const std::string folded = run(kReport + " -i " + data + " --format folded").out;
  const uint64_t in_burst = faults_in(folded, "burst"), in_trickle = faults_in(folded, "trickle");
  // Every fault is counted, each sample standing for those since the one
  // before: the burst's events are its faults, to the last period's. The
  // trickle's first sample may stand for some of the start-up's faults too
  // (a few hundred, in ld.so), where the period was long.
  EXPECT_GT(in_burst, 0.9 * burst) << folded;
  EXPECT_LT(in_burst, 1.1 * burst) << folded;
  EXPECT_LT(in_trickle, trickle + 400) << folded;
  const std::string top = run(kReport + " -i " + data + " --stdio --no-children").out;
  EXPECT_NE(top.find(" events in "), std::string::npos) << top;
  EXPECT_NE(top.find("    Events"), std::string::npos) << top;

  // Counted by samples, the burst is a few samples of hundreds of faults.
  const std::string counted =
      run(kReport + " -i " + data + " --format folded --weight samples").out;
  EXPECT_GT(faults_in(counted, "burst"), 0u) << counted;
  EXPECT_LT(faults_in(counted, "burst"), 0.1 * burst) << counted;

  // script prints each sample's period, as perf script does.
  const std::string script = run(kReport + " script -i " + data).out;
  EXPECT_TRUE(std::regex_search(script, std::regex(": +[0-9]{3,} page-faults:"))) << script;
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

}  // namespace
}  // namespace ebprof::e2e
