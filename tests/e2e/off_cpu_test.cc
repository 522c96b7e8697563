// End-to-end, off-CPU time: --off-cpu, --view wall, the switch hooks, the
// filters of what is recorded, and --wakers.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <utility>

#include "tests/e2e/e2e_support.h"

namespace ebprof::e2e {
namespace {

const std::string kOffCpu = EBPROF_OFFCPU_BIN;

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

}  // namespace
}  // namespace ebprof::e2e
