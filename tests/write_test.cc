// The writers, on hand-built profiles: what each output format prints.
// This binary links the write stage alone (and the model), so a writer that
// reached for the symbolizer would not link.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "browser.h"
#include "common/error.h"
#include "pprof_decode.h"
#include "profile_fakes.h"
#include "report/write/flame_tree.h"
#include "report/write/flamegraph_writer.h"
#include "report/write/folded_writer.h"
#include "report/write/frame_text.h"
#include "report/write/pprof_writer.h"
#include "report/write/script_writer.h"
#include "report/write/top_writer.h"

namespace ebprof::report {
namespace {

using namespace fakes;

std::vector<StackSpec> sample_stacks() {
  const Frame leaf = fn("demo::hot_leaf(unsigned long)", "libdemo.so");
  const Frame a = fn("demo::caller_a()", "hotcold");
  const Frame b = fn("demo::caller_b()", "hotcold");
  const Frame main_fn = fn("main", "hotcold");
  return {{"hotcold", 10, 10, 0, 70, {leaf, a, main_fn}},
          {"hotcold", 10, 12, 1, 25, {leaf, b, main_fn}},
          {"hotcold", 11, 11, 1, 5, {kernel_fn("irq_exit"), leaf, b, main_fn}}};
}

TEST(FrameText, UnnamedFramesSayWhereAndWhy) {
  Frame f{.reason = UnnamedReason::kStripped, .file_offset = 0x2724a, .module = "libc.so.6"};
  EXPECT_EQ(frame_name(f), "[unknown] (libc.so.6+0x2724a, stripped without debuginfo)");
  f.reason = UnnamedReason::kNoSymbol;  // [vdso]: the module and offset say it all
  EXPECT_EQ(frame_name(f), "[unknown] (libc.so.6+0x2724a)");
  Frame unmapped{.reason = UnnamedReason::kNoMapping, .address = 0x10, .module = "[unknown]"};
  EXPECT_EQ(frame_name(unmapped), "[unknown] (0x10, no mapping)");
  Frame anon{.kind = FrameKind::kJit,
             .reason = UnnamedReason::kJitMapMissing,
             .offset = 0x40,
             .module = "[anon]"};
  EXPECT_EQ(frame_name(anon), "[unknown] ([anon]+0x40, JIT map missing)");
  Frame past{.kind = FrameKind::kKernel,
             .reason = UnnamedReason::kNoKernelSymbol,
             .address = 0xffffffff81000200,
             .name = "schedule"};
  EXPECT_EQ(frame_name(past), "[unknown] (0xffffffff81000200, past schedule)");
  past.name.clear();
  EXPECT_EQ(frame_name(past), "[unknown] (0xffffffff81000200, below every kernel symbol)");
  EXPECT_EQ(frame_name(Frame{.reason = UnnamedReason::kStackLost}),
            "[unknown] (stack lost in a damaged frame)");
  EXPECT_EQ(frame_name(Frame{.kind = FrameKind::kOffCpuState, .state = ThreadState::kSleeping}),
            "[off-cpu: S sleeping]");
  EXPECT_EQ(frame_name(Frame{.kind = FrameKind::kWakerSeparator}), "--");
}

TEST(FrameText, UnnamedReasonsMostFirstThenByText) {
  EXPECT_EQ(describe_unnamed({{UnnamedReason::kNoSymbol, 2},
                              {UnnamedReason::kStripped, 30},
                              {UnnamedReason::kNoMapping, 2}},
                             100),
            "stripped without debuginfo in 30 samples (30.0%), no mapping in 2 samples (2.0%), "
            "no symbol in 2 samples (2.0%)");
  EXPECT_EQ(describe_unnamed({}, 100), "none");
}

TEST(FoldedWriter, RootFirstCommFirstMergedAndSorted) {
  std::vector<StackSpec> specs = sample_stacks();
  specs.push_back(specs[0]);  // same chain from another pid merges
  specs.back().pid = 99;
  specs.back().count = 1;
  std::ostringstream out;
  write_folded(out, make_profile(specs));
  EXPECT_EQ(out.str(),
            "hotcold;main;demo::caller_a();demo::hot_leaf(unsigned long) 71\n"
            "hotcold;main;demo::caller_b();demo::hot_leaf(unsigned long) 25\n"
            "hotcold;main;demo::caller_b();demo::hot_leaf(unsigned long);irq_exit 5\n");
}

TEST(FoldedWriter, PrefixAnnotationsAndDelimiter) {
  std::vector<StackSpec> specs = sample_stacks();
  specs[1].frames[0].kind = FrameKind::kInlined;  // hot_leaf inlined into caller_b here
  specs[2].frames.insert(specs[2].frames.end() - 1, fn("jitted", "perf-11.map", FrameKind::kJit));
  std::ostringstream out;
  write_folded(out, make_profile({specs[1], specs[2]}),
               {.comm = true, .pid = true, .annotate = true, .delimit = true});
  EXPECT_EQ(out.str(),
            "hotcold-10;main;demo::caller_b();demo::hot_leaf(unsigned long)_[i] 25\n"
            "hotcold-11;main;jitted_[j];demo::caller_b();demo::hot_leaf(unsigned long);-;"
            "irq_exit_[k] 5\n");
  std::ostringstream bare;
  write_folded(bare, make_profile({sample_stacks()[2]}), {.comm = false});
  EXPECT_EQ(bare.str(), "main;demo::caller_b();demo::hot_leaf(unsigned long);irq_exit 5\n");
}

TEST(FoldedWriter, SeparatorsInCommsAndNamesCannotForgeFrames) {
  std::ostringstream out;
  write_folded(out, make_profile({{"evil;comm\nx", 1, 1, 0, 3, {fn("f;g", "m")}}}));
  EXPECT_EQ(out.str(), "evil_comm_x;f_g 3\n");
}

TEST(TopWriter, LongNamesKeepTheirRowIntact) {
  const std::string name(3000, 'n');
  std::ostringstream out;
  write_top(out,
            make_profile({{"c", 1, 1, 0, 2, {fn(name, "m")}}, {"c", 1, 1, 0, 1, {fn("g", "m")}}}),
            {.rows = 0});
  const std::string text = out.str();
  EXPECT_NE(text.find("[.] " + name + "\n"), std::string::npos);
  EXPECT_NE(text.find("[.] g\n"), std::string::npos);
}

// The rows of a top table, without the header, trailing spaces trimmed.
std::vector<std::string> top_lines(const Profile& profile, TopOptions o) {
  std::ostringstream out;
  write_top(out, profile, o);
  std::vector<std::string> rows;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);)
    if (!line.starts_with("#"))
      rows.push_back(line.substr(0, line.find_last_not_of(' ') + 1));
  return rows;
}

TEST(TopWriter, SelfAndChildrenPerSortKey) {
  const Profile profile = make_profile(sample_stacks(), summary_of(100, 1));
  auto rows = top_lines(profile, {.rows = 0});
  ASSERT_EQ(rows.size(), 2u);
  // hot_leaf: the leaf of 95 samples, on the stack of all 100.
  EXPECT_EQ(rows[0],
            "   100.00%    95.00%        95  hotcold          libdemo.so               [.] "
            "demo::hot_leaf(unsigned long)");
  EXPECT_EQ(
      rows[1],
      "     5.00%     5.00%         5  hotcold          [kernel.kallsyms]        [k] irq_exit");

  // --children: main, on every stack, leads; callers follow.
  rows = top_lines(profile, {.rows = 3, .children = true});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NE(rows[0].find("100.00%     0.00%         0  hotcold          hotcold"),
            std::string::npos)
      << rows[0];
  EXPECT_NE(rows[2].find("70.00%     0.00%         0"), std::string::npos) << rows[2];
  EXPECT_NE(rows[2].find("demo::caller_a()"), std::string::npos) << rows[2];

  // Keys without a frame: self equals children.
  rows = top_lines(profile, {.rows = 0, .sort = parse_sort_keys("pid,cpu")});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], "    70.00%    70.00%        70  10       0");
  EXPECT_EQ(rows[2], "     5.00%     5.00%         5  11       1");
  EXPECT_THROW(parse_sort_keys("comm,bogus"), Error);
  // A cgroup column: the cgroup's path, or [none].
  std::vector<StackSpec> in_cgroups = sample_stacks();
  in_cgroups[0].cgroup = "/system.slice/hotcold.service";
  rows = top_lines(make_profile(in_cgroups, summary_of(100, 1)),
                   {.rows = 0, .sort = parse_sort_keys("cgroup")});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], "    70.00%    70.00%        70  /system.slice/hotcold.service");
  EXPECT_EQ(rows[1], "    30.00%    30.00%        30  [none]");
  EXPECT_EQ(parse_sort_keys("symbol,tid"), (std::vector<SortKey>{SortKey::kTid, SortKey::kSymbol}));
  EXPECT_EQ(parse_sort_keys("sym"), std::vector<SortKey>{SortKey::kSymbol}) << "perf's name";

  // --percent-limit: of self, or of children with --children.
  rows = top_lines(profile, {.rows = 0, .percent_limit = 5.5});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NE(rows[0].find("hot_leaf"), std::string::npos) << rows[0];
  rows = top_lines(profile, {.rows = 0, .children = true, .percent_limit = 70});
  EXPECT_EQ(rows.size(), 3u) << "hot_leaf, main and caller_a (70%: at the limit, kept)";
}

// The header says what was left out and why: the idle task's samples,
// which a report leaves out unasked, are not "filtered"; one is a sample;
// a view with nothing in it says what the recording holds instead.
TEST(TopWriter, TheHeaderSaysWhatWasLeftOut) {
  auto header = [](uint64_t recorded, uint64_t idle, std::vector<StackSpec> stacks) {
    RecordingSummary summary = summary_of(0, 1);
    summary.recorded_samples = recorded;
    summary.idle_samples = idle;
    std::ostringstream out;
    write_top(out, make_profile(stacks, summary), {});
    return out.str().substr(0, out.str().find(" of cpu-clock"));
  };
  const std::vector<StackSpec> stacks = sample_stacks();  // 100 samples
  EXPECT_EQ(header(100, 0, stacks), "# 100 samples");
  EXPECT_EQ(header(112, 12, stacks),
            "# 100 samples (of 112 recorded: 12 samples of the idle task left out, "
            "--include-idle counts them)");
  EXPECT_EQ(header(120, 12, stacks),
            "# 100 samples (of 120 recorded: filtered, 12 samples of the idle task among them)");
  EXPECT_EQ(header(130, 0, stacks), "# 100 samples (of 130 recorded: filtered)");
  RecordingSummary off_cpu_only = summary_of(0, 1);
  off_cpu_only.unviewed_intervals = 40;
  std::ostringstream empty;
  write_top(empty, make_profile({}, off_cpu_only), {});
  EXPECT_NE(empty.str().find("# no samples on CPU; the recording holds 40 intervals off CPU: "
                             "--view offcpu (or wall) shows them\n"),
            std::string::npos)
      << empty.str();
  EXPECT_EQ(header(2, 1, {{"app", 1, 1, 0, 1, {fn("f", "app")}}}),
            "# 1 sample (of 2 recorded: 1 sample of the idle task left out, --include-idle "
            "counts them)");
}

// A Python the recorder could not read is said once per reason.
TEST(TopWriter, TheHeaderSaysWhichPythonFramesWereNotRead) {
  RecordingSummary summary = summary_of(0, 1);
  summary.python_not_read = {{"CPython 3.12.1: ebprof reads 3.11 only", 2}};
  std::ostringstream out;
  write_top(out, make_profile(sample_stacks(), summary), {});
  EXPECT_NE(out.str().find("\n# Python frames not read in 2 processes: CPython 3.12.1: ebprof "
                           "reads 3.11 only\n"),
            std::string::npos)
      << out.str();
}

// -g: under each row, the call paths of its self samples, as perf report
// --stdio draws them.
TEST(TopWriter, CallGraphsUnderEachRow) {
  const Profile profile = make_profile(sample_stacks(), summary_of(100, 1));
  auto top = [&](const std::string& spec) {
    std::ostringstream out;
    write_top(out, profile, {.rows = 1, .call_graph = parse_call_graph(spec)});
    const std::string text = out.str();
    const size_t row = text.find("[.] demo::hot_leaf(unsigned long)\n");
    // From the row's end to the footer, the blank line before it included.
    const size_t end = text.find("\n#", row) + 1;
    return row == std::string::npos ? text : text.substr(row + 34, end - row - 34);
  };
  EXPECT_EQ(top("graph"),
            "            |\n"
            "            |--70.00%--demo::caller_a()\n"
            "            |          main\n"
            "            |\n"
            "             --25.00%--demo::caller_b()\n"
            "                       main\n"
            "\n");
  EXPECT_EQ(top("caller"),
            "            ---main\n"
            "               |\n"
            "               |--70.00%--demo::caller_a()\n"
            "               |\n"
            "                --25.00%--demo::caller_b()\n"
            "\n");
  EXPECT_EQ(top("folded"),
            "            70.00% main;demo::caller_a();demo::hot_leaf(unsigned long)\n"
            "            25.00% main;demo::caller_b();demo::hot_leaf(unsigned long)\n"
            "\n");
  EXPECT_EQ(top("flat,50"),
            "            70.00%\n"
            "                demo::hot_leaf(unsigned long)\n"
            "                demo::caller_a()\n"
            "                main\n"
            "\n");
  EXPECT_EQ(top("graph,30"),
            "            |\n"
            "             --70.00%--demo::caller_a()\n"
            "                       main\n"
            "\n")
      << "caller_b's 25% left out";
  EXPECT_EQ(top("none"), "");
  EXPECT_THROW(parse_call_graph("sideways"), Error);
  EXPECT_THROW(parse_call_graph("graph,lots"), Error);
  EXPECT_THROW(parse_call_graph("graph,0.5,address"), Error);
  EXPECT_THROW(parse_call_graph("graph,,caller"), Error);
  EXPECT_THROW(parse_call_graph("graph,101"), Error);
  EXPECT_THROW(parse_call_graph("nan"), Error);
  EXPECT_EQ(parse_call_graph("callee,2").min_percent, 2.0);
  // perf's TYPE,MIN[,PRINT_LIMIT],ORDER[,KEY], parts in any order.
  const CallGraphOptions perf = parse_call_graph("graph,0.5,20,caller,function");
  EXPECT_EQ(perf.mode, CallGraphMode::kCaller);
  EXPECT_EQ(perf.min_percent, 0.5);
  EXPECT_EQ(parse_call_graph("fractal,1,callee").mode, CallGraphMode::kGraph);
  EXPECT_EQ(parse_call_graph("caller,0.5,callee").mode, CallGraphMode::kGraph);
  EXPECT_EQ(parse_call_graph("").mode, CallGraphMode::kGraph);
}

// With --children, perf draws under each row what its function called:
// main, with no self samples, got no graph at all.
TEST(TopWriter, ChildrenRowsShowWhatTheirFunctionCalled) {
  const Profile profile = make_profile(sample_stacks(), summary_of(100, 1));
  auto row = [&](const std::string& spec, const std::string& symbol) {
    std::ostringstream out;
    write_top(out, profile, {.rows = 0, .children = true, .call_graph = parse_call_graph(spec)});
    const std::string text = out.str();
    const size_t at = text.find("[.] " + symbol + "\n");
    if (at == std::string::npos)
      return text;
    const size_t start = at + symbol.size() + 5;
    return text.substr(start, text.find("\n\n", start) + 2 - start);
  };
  EXPECT_EQ(row("graph", "main"),
            "            ---main\n"
            "               |\n"
            "               |--70.00%--demo::caller_a()\n"
            "               |          demo::hot_leaf(unsigned long)\n"
            "               |\n"
            "                --30.00%--demo::caller_b()\n"
            "                          demo::hot_leaf(unsigned long)\n"
            "                          |\n"
            "                           --5.00%--irq_exit\n"
            "\n");
  EXPECT_EQ(row("folded", "demo::caller_a()"),
            "            70.00% demo::caller_a();demo::hot_leaf(unsigned long)\n\n");
  // A leaf's row: its callers alone, as without --children.
  EXPECT_EQ(row("graph", "demo::hot_leaf(unsigned long)").find("---"), std::string::npos);
}

TEST(TopWriter, SelfTimeOfLeafFramesMostFirst) {
  RecordingSummary summary = summary_of(100, 1);
  summary.ended = false;
  const Profile profile = make_profile(sample_stacks(), summary);
  std::ostringstream out;
  write_top(out, profile, {.rows = 0});
  const std::string text = out.str();
  auto hot =
      text.find("95.00%        95  hotcold          libdemo.so               [.] demo::hot_leaf");
  auto irq = text.find("5.00%         5  hotcold          [kernel.kallsyms]        [k] irq_exit");
  EXPECT_NE(hot, std::string::npos) << text;
  EXPECT_NE(irq, std::string::npos) << text;
  EXPECT_LT(hot, irq);
  EXPECT_NE(text.find("# recording has no end frame"), std::string::npos);

  std::ostringstream one;
  write_top(one, profile, {.rows = 1});
  EXPECT_EQ(one.str().find("irq_exit"), std::string::npos);

  // --no-children: perf's table without the Children column.
  std::ostringstream self;
  write_top(self, profile, {.rows = 0, .children_column = false});
  EXPECT_NE(self.str().find("#     Self   Samples  Command"), std::string::npos) << self.str();
  EXPECT_NE(self.str().find("\n    95.00%        95  hotcold"), std::string::npos) << self.str();
  EXPECT_EQ(self.str().find("Children"), std::string::npos) << self.str();
}

TEST(TopWriter, SortByStateShowsWhereThreadsWaited) {
  std::vector<StackSpec> specs{{"app", 1, 1, 0, 4, {fn("f")}},
                               {"app", 1, 1, 0, 6, {fn("g")}, ThreadState::kUninterruptible}};
  std::ostringstream out;
  write_top(out, make_profile(specs, summary_of(10, 10)),
            {.rows = 0, .sort = parse_sort_keys("state")});
  EXPECT_NE(out.str().find("40.00%         4  on CPU"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("60.00%         6  D uninterruptible"), std::string::npos) << out.str();
}

// A stack whose leaf address has two functions inlined into a third.
std::vector<Frame> inlined_stack() {
  Frame inner = at("inner", 0x1234, 0);
  inner.kind = FrameKind::kInlined;
  inner.system_name = "_Z5innerv";
  inner.file = "app.cc";
  inner.line = 10;
  Frame middle = inner;
  middle.name = "middle";
  middle.system_name = "_Z6middlev";
  middle.line = 20;
  Frame outer = at("outer", 0x1234, 0x34);
  outer.system_name = "_Z5outerv";
  outer.file = "app.cc";
  outer.line = 30;
  return {inner, middle, outer, at("main", 0x1100, 0x10)};
}

// pprof keeps inlining inside one location: its lines, innermost first.
// Strings are UTF-8 whatever bytes a comm or a name held.
TEST(PprofWriter, InlinedFramesAreLinesOfOneLocationAndStringsAreUtf8) {
  const Profile profile = make_profile({{"bad\xff\xc0\x80"
                                         "comm\xe2\x82\xac",
                                         7, 8, 1, 3, inlined_stack()}},
                                       summary_of(3, 1));
  std::ostringstream out;
  write_pprof(out, profile);
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

TEST(PprofWriter, SamplesCarryTheLabelsAskedFor) {
  const Profile profile = make_profile({{"app", 7, 8, 1, 3, {fn("f")}}}, summary_of(3, 1));
  auto keys = [&](PprofLabels labels) {
    std::ostringstream out;
    write_pprof(out, profile, labels);
    const perftools::profiles::Profile p = decode_pprof(out.str());
    std::vector<std::string> names;
    for (const auto& l : p.sample(0).label())
      names.push_back(p.string_table(l.key()));
    return names;
  };
  EXPECT_EQ(keys({}), (std::vector<std::string>{"pid", "tid", "cpu", "comm"}))
      << "no cgroup label for a sample in none";
  EXPECT_EQ(keys({.pid = true, .tid = false, .comm = true, .cpu = false}),
            (std::vector<std::string>{"pid", "comm"}));
  EXPECT_TRUE(keys({false, false, false, false, false}).empty());
}

// The cgroup label is the cgroup's path, a string as Pyroscope and Parca
// keep labels.
TEST(PprofWriter, ACgroupIsAStringLabelOfItsPath) {
  StackSpec in_service{"app", 7, 8, 1, 3, {fn("f")}};
  in_service.cgroup = "/system.slice/app.service";
  const Profile profile = make_profile({in_service}, summary_of(3, 1));
  std::ostringstream out;
  write_pprof(out, profile, {.pid = false, .tid = false, .comm = false, .cpu = false});
  const perftools::profiles::Profile p = decode_pprof(out.str());
  ASSERT_EQ(p.sample(0).label_size(), 1);
  EXPECT_EQ(p.string_table(p.sample(0).label(0).key()), "cgroup");
  EXPECT_EQ(p.string_table(p.sample(0).label(0).str()), "/system.slice/app.service");
}

// What Pyroscope and Parca refuse a profile for, none of which ebprof's
// has: ids other than 1, 2, 3, ... (Parca), a sample type with a '-',
// a first string that is not "", values per sample that differ from the
// sample types (both), no period type.
TEST(PprofWriter, WhatBackendsCheckHolds) {
  std::vector<StackSpec> specs = sample_stacks();
  specs.push_back({"app", 1, 1, 0, 6, {fn("g")}, ThreadState::kSleeping, 3'000'000'000});
  std::ostringstream out;
  write_pprof(out, make_profile(specs, summary_of(100, 1)));
  const perftools::profiles::Profile p = decode_pprof(out.str());
  ASSERT_GT(p.string_table_size(), 0);
  EXPECT_EQ(p.string_table(0), "");
  for (int i = 0; i < p.mapping_size(); ++i)
    EXPECT_EQ(p.mapping(i).id(), uint64_t(i + 1));
  for (int i = 0; i < p.function_size(); ++i)
    EXPECT_EQ(p.function(i).id(), uint64_t(i + 1));
  for (int i = 0; i < p.location_size(); ++i) {
    EXPECT_EQ(p.location(i).id(), uint64_t(i + 1));
    EXPECT_GT(p.location(i).mapping_id(), 0u);
  }
  for (const auto& t : p.sample_type())
    EXPECT_EQ(p.string_table(t.type()).find('-'), std::string::npos) << p.string_table(t.type());
  EXPECT_EQ(p.string_table(p.period_type().type()), "cpu");
  EXPECT_GT(p.period(), 0);
  for (const auto& sample : p.sample()) {
    EXPECT_EQ(sample.value_size(), p.sample_type_size());
    for (uint64_t id : sample.location_id())
      EXPECT_TRUE(id >= 1 && id <= uint64_t(p.location_size()));
    for (const auto& l : sample.label())
      EXPECT_GT(l.key(), 0);
  }
}

// Off CPU in pprof: an off_cpu/nanoseconds type after the others, each
// sample with one value per type; a recording without samples on CPU has
// no cpu type.
TEST(PprofWriter, OffCpuTimeIsATypeOfItsOwn) {
  const std::vector<StackSpec> specs{
      {"app", 1, 1, 0, 4, {fn("f")}},
      {"app", 1, 1, 0, 6, {fn("g")}, ThreadState::kSleeping, 3'000'000'000}};
  for (bool sampling : {true, false}) {
    RecordingSummary summary = summary_of(10, 10);
    summary.sampling = sampling;
    std::ostringstream out;
    write_pprof(out, make_profile(specs, summary));
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

// What script writes of a stack of `frames`.
std::string script_frames(std::vector<Frame> frames) {
  const Profile profile = make_profile({{"app", 1, 1, 0, 1, std::move(frames)}});
  std::ostringstream out;
  write_script_frames(out, profile.stacks[0].frames);
  return out.str();
}

// Like perf script --inline: an inlined function has no offset of its own.
TEST(ScriptWriter, InlinedFramesSayInlinedWhereTheModuleGoes) {
  EXPECT_EQ(script_frames(inlined_stack()),
            "\t            1234 inner (inlined)\n"
            "\t            1234 middle (inlined)\n"
            "\t            1234 outer+0x34 (/bin/app)\n"
            "\t            1100 main+0x10 (/bin/app)\n"
            "\n");
}

// Unnamed frames read as perf prints them, so that perf-script consumers
// keep the module (stackcollapse-perf.pl names them [MODULE]).
TEST(ScriptWriter, UnnamedFramesAreWrittenAsPerfWritesThem) {
  Frame stripped{.reason = UnnamedReason::kStripped,
                 .address = 0x7f00000124a,
                 .file_offset = 0x2724a,
                 .module = "libc.so.6",
                 .path = "/usr/lib/x86_64-linux-gnu/libc.so.6"};
  Frame nowhere{.reason = UnnamedReason::kNoMapping, .address = 0x10, .module = "[unknown]"};
  EXPECT_EQ(script_frames({stripped, nowhere, fn("main")}),
            "\t     7f00000124a [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
            "\t              10 [unknown] ([unknown])\n"
            "\t               0 main+0x0 (app)\n"
            "\n");
}

TEST(FlameGraph, TreeSumsStacksAndThePageEscapesNames) {
  const Profile profile = make_profile(
      {{"app", 1, 1, 0, 30, {fn("f"), fn("main")}},
       {"app", 1, 1, 0, 70, {fn("g"), fn("main")}},
       {"app", 1, 1, 0, 5, {kernel_fn("irq_exit"), fn("</script><script>alert(1)</script>")}}});
  std::vector<FlameNode> tree = build_flame_tree(flame_stacks(profile));
  EXPECT_EQ(tree[0].name, "all");
  EXPECT_EQ(tree[0].value, 105);
  ASSERT_EQ(tree[0].children.size(), 1u);
  const FlameNode& comm = tree[tree[0].children[0]];
  EXPECT_EQ(comm.kind, FlameKind::kComm);
  EXPECT_EQ(comm.value, 105);
  std::ostringstream html, svg;
  write_flamegraph_html(html, flame_stacks(profile), {"t<i>tle"});
  EXPECT_EQ(html.str().find("</script><script>alert"), std::string::npos);
  EXPECT_NE(html.str().find("\\u003c/script\\u003e"), std::string::npos);
  EXPECT_NE(html.str().find("<title>t&lt;i&gt;tle</title>"), std::string::npos);
  write_flamegraph_svg(svg, flame_stacks(profile), {"t"});
  EXPECT_TRUE(svg.str().starts_with("<?xml")) << svg.str();
  EXPECT_NE(svg.str().find(">main<"), std::string::npos) << svg.str();
  EXPECT_NE(svg.str().find("&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(svg.str().find("<script>"), std::string::npos);
}

// 100k distinct stacks: the page draws frames narrower than a pixel as one
// block, so a browser shows it with a bounded number of elements. The page
// is kept as a test artifact (bench/flamegraph.sh times loading it).
TEST(FlameGraph, AHundredThousandStacksDrawABoundedPage) {
  std::vector<StackSpec> specs;
  for (int i = 0; i < 100000; ++i) {
    std::vector<Frame> frames;
    for (int level = 0, rest = i; level < 5; ++level, rest /= 10)
      frames.insert(frames.begin(),
                    fn("fn_" + std::to_string(level) + "_" + std::to_string(rest % 10)));
    frames.push_back(fn("main"));
    specs.push_back({"app", 1, 1, 0, static_cast<uint64_t>(i % 7 + 1), std::move(frames)});
  }
  const Profile profile = make_profile(specs);
  EXPECT_EQ(build_flame_tree(flame_stacks(profile)).size(),
            2u + 1 + 10 + 100 + 1000 + 10000 + 100000);
  std::filesystem::create_directories(EBPROF_ARTIFACTS);
  const std::string page = std::string(EBPROF_ARTIFACTS) + "/flame-100k.html";
  {
    std::ofstream out(page);
    write_flamegraph_html(out, flame_stacks(profile), {"100k stacks"});
  }
  if (system("command -v chromium >/dev/null") != 0)
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium): page not loaded";
  const std::string dom = ::testing::TempDir() + "/flame-100k.dom";
  const std::string log = ::testing::TempDir() + "/flame-100k.log";
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

}  // namespace
}  // namespace ebprof::report
