// The aggregate stage: keys merged as the grouping says, blocked stacks
// decorated, the stack filter, and two profiles joined for diff (with the
// diff writers that show the join).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "pprof_decode.h"
#include "profile_fakes.h"
#include "report/aggregate/aggregate.h"
#include "report/aggregate/diff.h"
#include "report/aggregate/stack_filter.h"
#include "report/load/settle.h"
#include "report/write/diff_writer.h"
#include "report/write/folded_writer.h"
#include "report/write/pprof_writer.h"
#include "resolver_fixture.h"

namespace ebprof::report {
namespace {

using namespace fakes;

// A recording of one process with kernel-only stacks, named from its
// kallsyms: the symbolizer needs no file.
Recording kernel_recording(NameTable& names) {
  Recording r;
  r.kernel_symbols = {{0xffff0000, "do_work", "", 0x100},
                      {0xffff0100, "schedule", "", 0x100},
                      {0xffff0200, "try_to_wake_up", "", 0x100}};
  r.stacks.add(0, {{{0xffff0010}, {}}, {{0xffff0110}, {}}, {{0xffff0210}, {}}});
  const uint32_t app = names.intern("app"), waker = names.intern("waker");
  auto key = [&](uint32_t tid, uint16_t cpu, uint32_t stack, ThreadState state) {
    return SampleKey{
        .stack = {0, 7, 0, stack}, .tid = tid, .comm = app, .cpu = cpu, .state = state};
  };
  SampleKey woken = key(8, 0, 1, ThreadState::kSleeping);
  woken.waker = {0, 9, 0, 2};
  woken.waker_comm = waker;
  r.counts = {{key(7, 0, 0, ThreadState::kOnCpu), {3, 30}},
              {key(8, 1, 0, ThreadState::kOnCpu), {2, 20}},
              {key(8, 1, 1, ThreadState::kSleeping), {1, 1500}},
              {woken, {4, 2000}}};
  return r;
}

// --call-graph dwarf: samples whose windows differ but unwind alike are
// one stack, not one per window, once settled as the load settles them.
TEST(Aggregate, WindowsThatUnwindAlikeAreOneStack) {
  NameTable names;
  std::vector<Recording> recordings(1);
  Recording& r = recordings[0];
  r.info.call_graph = format::CallGraph::kDwarf;
  r.info.stack_block_bytes = 128;
  r.info.user_registers = {16, 7, 6};
  r.processes[7].push_back(format::ProcessInfo{.pid = 7});
  r.stacks.add(0, {{{}, {0x401000}}});
  // Nothing to unwind with: each window's walk is its sampled address.
  std::vector<format::UserWindow> windows;
  for (uint32_t id : {0, 1, 2})
    windows.push_back({{id == 2 ? 0x402000u : 0x401000u, 0x7fff0000, 0},
                       0x7fff0000,
                       8,
                       format::UserAbi::k64,
                       {id}});
  r.windows.add(0, std::move(windows));
  const uint32_t app = names.intern("app");
  for (uint32_t id : {0, 1, 2})
    r.counts.push_back({SampleKey{.stack = {0, 7, 0, 0, id}, .tid = 7, .comm = app}, {1, 10}});
  fakes::TestResolver stages;
  StackResolver& resolver = stages.resolver;
  settle_keys([&](const Recording& rec, const IdRuns<format::UserWindow>& w,
                  std::span<StackRef> refs) { resolver.settle(rec, w, refs); },
              r, r.windows, r.counts);
  const Profile p = aggregate(recordings, names, resolver, {});
  ASSERT_EQ(p.stacks.size(), 2u);
  EXPECT_EQ(p.stacks[0].values.count, 2u);
  EXPECT_EQ(p.stacks[1].values.count, 1u);
  EXPECT_NE(p.stacks[0].frames[0].address, p.stacks[1].frames[0].address);
}

TEST(Aggregate, MergesWhatTheGroupingDoesNotTellApart) {
  NameTable names;
  std::vector<Recording> recordings;
  recordings.push_back(kernel_recording(names));
  fakes::TestResolver stages;
  StackResolver& resolver = stages.resolver;
  const Profile merged = aggregate(recordings, names, resolver, {});
  // Threads merge; without --wakers, so do the two sleeps.
  ASSERT_EQ(merged.stacks.size(), 2u);
  EXPECT_EQ(merged.stacks[0].values.count, 5u);
  EXPECT_EQ(merged.stacks[1].values.count, 5u);
  EXPECT_EQ(merged.stacks[1].values.weight, 3500u);
  const Profile threads = aggregate(recordings, names, resolver, {.grouping = {.threads = true}});
  EXPECT_EQ(threads.stacks.size(), 4u);
  // --weight time: counts are microseconds, rounded per stack.
  const Profile time = aggregate(recordings, names, resolver, {.unit = Unit::kMicroseconds});
  EXPECT_EQ(time.stacks[1].values.count, 4u);
}

TEST(Aggregate, BlockedStacksGetTheirStateAndWaker) {
  NameTable names;
  std::vector<Recording> recordings;
  recordings.push_back(kernel_recording(names));
  fakes::TestResolver stages;
  StackResolver& resolver = stages.resolver;
  const Profile p = aggregate(recordings, names, resolver, {.grouping = {.wakers = true}});
  ASSERT_EQ(p.stacks.size(), 3u);
  std::ostringstream folded;
  write_folded(folded, p);
  EXPECT_EQ(folded.str(),
            "app;[off-cpu: S sleeping];schedule 1\n"
            "app;[off-cpu: S sleeping];schedule;--;try_to_wake_up;waker 4\n"
            "app;do_work 5\n");
  // --kernel-only keeps what the report added: it belongs to both halves.
  const StackFilter kernel{.kernel_only = true};
  const Profile k =
      aggregate(recordings, names, resolver, {.grouping = {.wakers = true}, .filter = &kernel});
  std::ostringstream kept;
  write_folded(kept, k);
  EXPECT_EQ(kept.str(), folded.str());
}

TEST(StackFilter, HalvesDsosAndFocus) {
  const Profile profile =
      make_profile({{"hotcold",
                     10,
                     10,
                     0,
                     70,
                     {fn("demo::hot_leaf(unsigned long)", "libdemo.so"),
                      fn("demo::caller_a()", "hotcold"), fn("main", "hotcold")}},
                    {"hotcold",
                     10,
                     12,
                     1,
                     25,
                     {fn("demo::hot_leaf(unsigned long)", "libdemo.so"),
                      fn("demo::caller_b()", "hotcold"), fn("main", "hotcold")}},
                    {"hotcold",
                     11,
                     11,
                     1,
                     5,
                     {kernel_fn("irq_exit"), fn("demo::hot_leaf(unsigned long)", "libdemo.so"),
                      fn("demo::caller_b()", "hotcold"), fn("main", "hotcold")}}});
  auto only = [&](const StackFilter& f) {
    uint64_t total = 0;
    std::vector<FrameView> kept;
    for (const ProfileStack& s : profile.stacks)
      if (std::optional<FrameView> frames = filter_frames(f, s.frames, *profile.frames)) {
        total += s.values.count;
        kept.push_back(*frames);
      }
    return std::make_pair(kept, total);
  };
  auto [kernel, kernel_total] = only({.kernel_only = true});
  EXPECT_EQ(kernel_total, 5u);  // stacks with no kernel half are gone
  ASSERT_EQ(kernel.size(), 1u);
  EXPECT_EQ(kernel[0].size(), 1u);
  auto [user, user_total] = only({.user_only = true});
  EXPECT_EQ(user_total, 100u);
  EXPECT_EQ(user[2][0].name, "demo::hot_leaf(unsigned long)");
  EXPECT_EQ(only({.dsos = {"[kernel.kallsyms]"}}).second, 5u);
  EXPECT_EQ(only({.symbol = std::regex("caller_b")}).second, 30u);
  EXPECT_EQ(only({.symbol = std::regex("^nothing$")}).second, 0u);
  // --max-stack: the frames nearest the leaf, kernel ones included.
  auto [two, two_total] = only({.max_stack = 2});
  EXPECT_EQ(two_total, 100u) << "no stack is dropped";
  ASSERT_EQ(two.size(), 3u);
  ASSERT_EQ(two[2].size(), 2u);
  EXPECT_EQ(two[2][0].name, "irq_exit");
  EXPECT_EQ(two[2][1].name, "demo::hot_leaf(unsigned long)");
  auto [user_two, user_two_total] = only({.user_only = true, .max_stack = 2});
  ASSERT_EQ(user_two.size(), 3u);
  ASSERT_EQ(user_two[2].size(), 2u);
  EXPECT_EQ(user_two[2][1].name, "demo::caller_b()");
  EXPECT_EQ(only({.max_stack = 3}).first[0].size(), 3u) << "a stack that fits is whole";
}

// A profile of `total` samples over 10 s: `hot` of them in f(), the rest in g().
Profile two_functions(uint64_t total, uint64_t hot) {
  return make_profile(
      {{"app", 1, 1, 0, hot, {at("f", 0x1010, 0x10), at("main", 0x3010, 0x10)}},
       {"app", 1, 1, 0, total - hot, {at("g", 0x2010, 0x10), at("main", 0x3010, 0x10)}}},
      summary_of(total, 10));
}

std::string diff_top(const Profile& base, const Profile& now, Normalize n, bool children = false) {
  std::ostringstream out;
  write_diff_top(out, join_profiles(base, now, n, Join::kSymbol), 0, children);
  return out.str();
}

TEST(Diff, ARecordingAgainstItselfIsAllZeros) {
  const Profile p = two_functions(100, 30);
  const std::string top = diff_top(p, p, Normalize::kTotal);
  EXPECT_NE(top.find("30.00        30.00        +0.00  app                      f"),
            std::string::npos)
      << top;
  EXPECT_NE(top.find("70.00        70.00        +0.00  app                      g"),
            std::string::npos)
      << top;
  EXPECT_EQ(top.find("appeared"), std::string::npos) << top;
  std::ostringstream folded;
  write_diff_folded(folded, join_profiles(p, p, Normalize::kTotal, Join::kAddress));
  EXPECT_EQ(folded.str(), "app;main;f 30 30\napp;main;g 70 70\n");
}

// f goes from 30% of 200 samples to 60% of 50: normalised by each total,
// exactly +30 points, and in the new recording's units the base had 15.
TEST(Diff, AShareMovingFrom30To60PercentShowsThatDelta) {
  const Profile base = two_functions(200, 60), now = two_functions(50, 30);
  const std::string top = diff_top(base, now, Normalize::kTotal);
  EXPECT_NE(top.find("30.00        60.00       +30.00  app                      f"),
            std::string::npos)
      << top;
  EXPECT_NE(top.find("70.00        40.00       -30.00  app                      g"),
            std::string::npos)
      << top;
  // Sorted by the size of the change; f first (a tie is broken by name).
  EXPECT_LT(top.find(" f\n"), top.find(" g\n"));
  std::ostringstream folded;
  write_diff_folded(folded, join_profiles(base, now, Normalize::kTotal, Join::kSymbol));
  EXPECT_EQ(folded.str(), "app;main;f 15 30\napp;main;g 35 20\n");
  // Scaled counts are whole, as difffolded.pl -n writes them: 200 samples
  // against 30 make 60 base samples of f worth 9 new ones, 140 of g 21.
  std::ostringstream whole;
  write_diff_folded(whole,
                    join_profiles(base, two_functions(30, 10), Normalize::kTotal, Join::kSymbol));
  EXPECT_EQ(whole.str(), "app;main;f 9 10\napp;main;g 21 20\n");
  // Without normalisation the raw samples are compared.
  const std::string raw = diff_top(base, now, Normalize::kNone);
  EXPECT_NE(raw.find("60.00        30.00       -30.00  app                      f"),
            std::string::npos)
      << raw;
}

// The time moves from one caller of f to the other: f's self is the same,
// --children shows the shift.
TEST(Diff, ChildrenShowAShiftBetweenCallers) {
  auto profile = [](uint64_t via_a, uint64_t via_b) {
    return make_profile(
        {{"app",
          1,
          1,
          0,
          via_a,
          {at("f", 0x1010, 0x10), at("a", 0x2010, 0x10), at("main", 0x3010, 0x10)}},
         {"app",
          1,
          1,
          0,
          via_b,
          {at("f", 0x1010, 0x10), at("b", 0x4010, 0x10), at("main", 0x3010, 0x10)}}},
        summary_of(via_a + via_b, 10));
  };
  const Profile base = profile(30, 70), now = profile(70, 30);
  const std::string self = diff_top(base, now, Normalize::kTotal);
  EXPECT_NE(self.find("100.00       100.00        +0.00  app                      f"),
            std::string::npos)
      << self;
  EXPECT_EQ(self.find(" a\n"), std::string::npos) << "a has no self time: " << self;
  const std::string children = diff_top(base, now, Normalize::kTotal, true);
  EXPECT_NE(children.find("# values: children (stacks it is on) samples"), std::string::npos)
      << children;
  EXPECT_NE(children.find("30.00        70.00       +40.00  app                      a"),
            std::string::npos)
      << children;
  EXPECT_NE(children.find("70.00        30.00       -40.00  app                      b"),
            std::string::npos)
      << children;
  EXPECT_NE(children.find("100.00       100.00        +0.00  app                      main"),
            std::string::npos)
      << children;
}

TEST(Diff, FunctionsThatAppearOrVanishHaveTheirOwnSections) {
  const Profile base =
      make_profile({{"app", 1, 1, 0, 30, {at("f", 0x1010, 0x10)}}}, summary_of(30, 10));
  const Profile now = make_profile({{"app", 1, 1, 0, 30, {at("f", 0x1010, 0x10)}},
                                    {"app", 1, 1, 0, 70, {at("g", 0x2010, 0x10)}},
                                    {"app", 1, 1, 0, 10, {at("h", 0x4010, 0x10)}}},
                                   summary_of(110, 10));
  const std::string top = diff_top(base, now, Normalize::kNone);
  const size_t appeared = top.find("# appeared");
  ASSERT_NE(appeared, std::string::npos) << top;
  EXPECT_GT(top.find(" g\n"), appeared) << top;
  EXPECT_GT(top.find(" h\n"), appeared) << top;
  EXPECT_NE(diff_top(now, base, Normalize::kNone).find("# vanished"), std::string::npos);
}

// Rebuilt code moves: a name join still matches, an address join does not.
TEST(Diff, JoinsBySymbolOrByBuildIdAndOffset) {
  const Profile base = two_functions(100, 30);
  Frame moved = at("f", 0x1010, 0x10);
  moved.build_id = "\x01";
  moved.file_offset = 0x99;
  const Profile now =
      make_profile({{"app", 1, 1, 0, 30, {moved, at("main", 0x3010, 0x10)}},
                    {"app", 1, 1, 0, 70, {at("g", 0x2010, 0x10), at("main", 0x3010, 0x10)}}},
                   summary_of(100, 10));
  EXPECT_EQ(join_profiles(base, now, Normalize::kTotal, Join::kSymbol).stacks.size(), 2u);
  EXPECT_EQ(join_profiles(base, now, Normalize::kTotal, Join::kAddress).stacks.size(), 3u);
}

TEST(Diff, PprofHoldsNewMinusBase) {
  const Profile base = two_functions(200, 60), now = two_functions(50, 30);
  std::ostringstream out;
  write_pprof_diff(out, base, 0.25, now);
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
  const Profile tail =
      make_profile({{"app", 1, 1, 0, 1, {at("h", 0x4010, 0x10)}}}, summary_of(1, 10));
  std::ostringstream tenth;
  write_pprof_diff(tenth, tail, 0.1, make_profile({}, summary_of(0, 10)));
  perftools::profiles::Profile t = decode_pprof(tenth.str());
  EXPECT_EQ(by_leaf(t, 0)["h"], 0);
  EXPECT_EQ(by_leaf(t, 1)["h"], -std::llround(0.1 * 1e9 / 99));
}

// Time-weighted diff: shares of each side's own total time.
TEST(Diff, TimeWeightedSharesAreOfEachSidesTime) {
  // Counted in microseconds: f takes 600 of base's 1000 us, 900 of new's 1000.
  Profile base = make_profile({{"app", 1, 1, 0, 600, {at("f", 0x1010, 0x10)}},
                               {"app", 1, 1, 0, 400, {at("g", 0x2010, 0x10)}}},
                              summary_of(100, 10));
  Profile now = make_profile({{"app", 1, 1, 0, 900, {at("f", 0x1010, 0x10)}},
                              {"app", 1, 1, 0, 100, {at("g", 0x2010, 0x10)}}},
                             summary_of(100, 10));
  base.unit = now.unit = Unit::kMicroseconds;
  std::ostringstream out;
  write_diff_top(out, join_profiles(base, now, Normalize::kTotal, Join::kSymbol), 0, false);
  EXPECT_NE(out.str().find("60.00        90.00       +30.00  app                      f"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("self us of each function"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace ebprof::report
