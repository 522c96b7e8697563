// End-to-end, bad input: what either tool does with a wrong option, path,
// target, file or signal: one line saying what to do, and nothing lost.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>
#include <utility>

#include "tests/e2e/e2e_support.h"

namespace ebprof::e2e {
namespace {

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

// Nothing replaces the previous recording before the new one has its first
// frames on disk and its command runs: a disk full at the start moved it
// to .old and left a 0-byte file, which a second attempt moved over .old
// (the recording gone); a command whose interpreter is missing left a
// header-only file "killed" (issue 27).
TEST(BadInput, APreviousRecordingOutlivesAFullDiskOrACommandThatCannotRun) {
  REQUIRE_BPF();
  const fs::path dir = fs::path(testing::TempDir()) / "full-at-start";
  fs::create_directories(dir);
  umount2(dir.c_str(), MNT_DETACH);
  if (mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=16k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  const std::string out = (dir / "perf.data").string();
  std::ofstream(out) << "the previous recording";
  {
    std::ofstream fill(dir / "filler");
    fill << std::string(16 << 10, 'x');
  }
  std::vector<Outcome> attempts;
  for (int i = 0; i < 2; ++i)
    attempts.push_back(run(kRecord + " -q -o " + out + " -- " + kHotcold + " 0.2"));
  const std::string after = slurp(out);
  const bool old = fs::exists(out + ".old");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
    ++entries;
  umount2(dir.c_str(), MNT_DETACH);
  for (const Outcome& r : attempts) {
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
  }
  EXPECT_EQ(after, "the previous recording");
  EXPECT_FALSE(old);
  EXPECT_EQ(entries, 2u) << "the previous recording and the filler, nothing left behind";

  const fs::path scripts = fresh_dir("no-interpreter");
  const std::string script = (scripts / "job.sh").string(), kept = (scripts / "perf.data").string();
  std::ofstream(script) << "#!/nonexistent/interp\necho hi\n";
  fs::permissions(script, fs::perms::owner_all);
  std::ofstream(kept) << "the previous recording";
  Outcome r = run(kRecord + " -q -o " + kept + " -- " + script);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cannot run '" + script + "'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("interpreter"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_EQ(slurp(kept), "the previous recording");
  EXPECT_FALSE(fs::exists(kept + ".old"));
  size_t left = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(scripts))
    ++left;
  EXPECT_EQ(left, 2u) << "no new file left beside it";
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

// A pattern as one word for the report to expand, not the shell. Quoting a
// const string: "'" + a temporary is what GCC 12 warns of, wrongly, with
// -Wrestrict (GCC bug 105329).
std::string quoted(const std::string& pattern) {
  return "'" + pattern + "'";
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
           {quoted(temp_file("rotated.data.*")), "no file matches: check the pattern"},
           {quoted(text.substr(0, text.size() - 4) + "*"), "not an ebprof recording"},
           {no_recordings.string(), "holds no ebprof recording"}}) {
    Outcome r = run(kReport + " -i " + path);
    EXPECT_EQ(r.status, 1) << path;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// --cache-dir . in a directory of recordings deleted them, oldest first,
// until what it held was under the cache's 1 GB (issue 27). A directory
// holding others' files keeps them, and is said once not to be used.
TEST(BadInput, ACacheDirectoryHoldingOthersFilesKeepsThem) {
  REQUIRE_BPF();
  if (run("command -v objcopy").status != 0)
    GTEST_SKIP() << "objcopy is not installed (binutils): no compressed debuginfo to inflate";
  const fs::path dir = fresh_dir("foreign-cache");
  // Compressed DWARF, which the report inflates and would cache.
  const std::string lib = (dir / "libebprof_demo.so").string();
  const std::string demo = (fs::path(kHotcold).parent_path() / "libebprof_demo.so").string();
  ASSERT_EQ(run("objcopy --compress-debug-sections=zlib " + demo + " " + lib).status, 0);
  const std::string data = (dir / "z.data").string();
  ASSERT_EQ(run(kRecord + " -q -F 499 -o " + data + " -- env LD_LIBRARY_PATH=" + dir.string() +
                " " + kHotcold + " 0.3")
                .status,
            0);
  // Two recordings of 600 MB each (sparse: no disk), over the 1 GB limit.
  const fs::path cache = dir / "cache";
  fs::create_directories(cache);
  for (const char* name : {"old.data", "new.data"}) {
    std::ofstream(cache / name) << "x";
    fs::resize_file(cache / name, uint64_t{600} << 20);
  }
  Outcome report = run(kReport + " -i " + data + " -n 3 --cache-dir " + cache.string());
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("hot_leaf"), std::string::npos);
  EXPECT_TRUE(fs::exists(cache / "old.data"));
  EXPECT_TRUE(fs::exists(cache / "new.data"));
  EXPECT_NE(report.err.find("--cache-dir " + cache.string() + " holds files"), std::string::npos)
      << report.err;
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

}  // namespace
}  // namespace ebprof::e2e
