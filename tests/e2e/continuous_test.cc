// End-to-end, recording that goes on: --switch-output, --flight-recorder,
// --split slices, --follow, and the recorder's memory over a long run.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <utility>

#include "tests/e2e/e2e_support.h"

namespace ebprof::e2e {
namespace {

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
// SIGUSR2, recording on, and once more when recording stops: never what an
// earlier dump holds (issue 26: two dumps read together counted it twice).
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
    // The last 5 s, then what came since the last dump (4 and 5 s, in
    // slices of a second): no sample in two dumps, so that they read
    // together count each once.
    EXPECT_NEAR(last - first, previous_end ? 4.75 : 5, 1.25);
    EXPECT_GT(first, previous_end) << "each file newer than the last";
    previous_end = last;
    Shares s = hotcold_shares(run(kReport + " -i " + f + " --format folded").out);
    EXPECT_NEAR(s.pct_a(), 70, 12);
  }
}

// `output`.YYYYmmddHHMMSScc for the wall-clock time `t`: the name a dump
// or a switched file gets, which anyone on the machine can foresee.
std::string dump_name(const std::string& output, std::chrono::system_clock::time_point t) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch());
  const time_t seconds = static_cast<time_t>(ns.count() / 1'000'000'000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &utc);
  char hundredths[4];
  std::snprintf(hundredths, sizeof hundredths, "%02d", int(ns.count() / 10'000'000 % 100));
  return output + "." + stamp + hundredths;
}

// Dump names are foreseeable to the hundredth of a second: a link planted
// at the next ones made the recorder exit having written nothing (issue
// 27), and a second dump within a hundredth of a second replaced the
// first. A dump takes the next free name (-1, -2...), never writing
// through a link, and one that cannot be written costs itself alone.
TEST(EndToEnd, FlightRecorderDumpsNeverReplaceAFileNorFollowALink) {
  REQUIRE_BPF();
  const fs::path dir = fresh_dir("flight-links");
  const std::string out = (dir / "x.data").string();
  const std::string target = (dir / "target").string();
  std::ofstream(target) << "not the recorder's";
  const pid_t pid =
      spawn({kRecord, "-q", "-F", "499", "--flight-recorder=5s", "-o", out, "--", kHotcold, "6"});
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  // Links at every name of the next two seconds.
  const auto now = std::chrono::system_clock::now();
  for (int i = 0; i < 200; ++i)
    fs::create_symlink(target, dump_name(out, now + std::chrono::milliseconds(10 * i)));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  kill(pid, SIGUSR2);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGUSR2);
  EXPECT_EQ(wait_exit(pid), 0) << "recording went on to the end";
  EXPECT_EQ(slurp(target), "not the recorder's");
  std::vector<std::string> dumps;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && !e.is_symlink() && e.path().string() != target)
      dumps.push_back(e.path().string());
  EXPECT_EQ(dumps.size(), 3u) << "two asked for within 5 ms, one at the end";
  for (const std::string& f : dumps)
    EXPECT_EQ(run(kReport + " info " + f).status, 0) << f;
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
  // The first slice holds the recording's first sample, which comes a few
  // ms after its start (the command's exec): the same second or the next.
  const int64_t start = raw_pprof(all).time;
  EXPECT_GE(raw_pprof(files.front()).time, start);
  EXPECT_LE(raw_pprof(files.front()).time, start + 1);
  EXPECT_GE(previous, start + 3);
}

// --follow reads the recording as it grows: a table every second, the
// last once the end frame is in, with every sample the file holds.
// The sample count in the header of each table --follow drew, in order.
std::vector<uint64_t> table_samples(const std::string& out) {
  std::vector<uint64_t> tables;
  const std::regex header(R"(# (\d+) samples of )");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), header); it != std::sregex_iterator();
       ++it)
    tables.push_back(std::stoull((*it)[1]));
  return tables;
}

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
  const std::vector<uint64_t> tables = table_samples(follow.out);
  ASSERT_GE(tables.size(), 3u) << follow.out;
  EXPECT_TRUE(std::is_sorted(tables.begin(), tables.end())) << follow.out;
  EXPECT_EQ(tables.back(), samples_in(data));
  const std::string last = follow.out.substr(follow.out.rfind("samples of "));
  EXPECT_NE(last.find(kLeafChain), std::string::npos) << last;
  // While the recorder writes it, a missing end frame is no alarm.
  EXPECT_EQ(follow.out.find("no end frame"), std::string::npos) << follow.out;
}

// --switch-output renames the file being written at each switch: --follow
// reads the rotation as one series, its count growing across switches,
// and ends with it (it reset at each switch, then failed: "cannot open").
TEST(EndToEnd, FollowReadsARotationAsOneSeries) {
  REQUIRE_BPF();
  const fs::path dir = temp_file("follow-rotation");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string data = (dir / "h.data").string();
  // An earlier series's file is not part of this one.
  fs::copy_file(std::string(EBPROF_TEST_DATA_DIR) + "/v1.2-hotcold.data",
                data + ".2020010100000000");
  const pid_t pid =
      spawn({kRecord, "-q", "-F", "499", "--switch-output=1s", "-o", data, "--", kHotcold, "3.5"});
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 100 && !fs::exists(data); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Outcome follow = run("timeout 30 " + kReport + " -i " + data + " --follow -n 5");
  EXPECT_EQ(wait_exit(pid), 0);
  EXPECT_EQ(follow.status, 0) << follow.err;
  EXPECT_EQ(follow.err, "");
  EXPECT_EQ(follow.out.find("no end frame"), std::string::npos) << follow.out;
  const std::vector<uint64_t> tables = table_samples(follow.out);
  ASSERT_GE(tables.size(), 3u) << follow.out;
  EXPECT_TRUE(std::is_sorted(tables.begin(), tables.end())) << follow.out;
  uint64_t series = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename() != "h.data.2020010100000000")
      series += samples_in(entry.path().string());
  EXPECT_EQ(tables.back(), series) << "every file of the series, the earlier one left out";
}

}  // namespace
}  // namespace ebprof::e2e
