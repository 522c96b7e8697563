// The run: options resolved into a plan, and whole reports through every
// stage.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <fstream>
#include <iterator>

#include "common/error.h"
#include "pprof_decode.h"
#include "profile_fakes.h"
#include "recording_fakes.h"
#include "report/load/load.h"
#include "report/load/merge.h"
#include "report/run/cli.h"
#include "report/run/follow.h"
#include "report/run/memory_budget.h"
#include "report/run/plan.h"
#include "report/run/run.h"
#include "report/run/slices.h"
#include "report/write/pprof_writer.h"

namespace ebprof::report {
namespace {

using namespace fakes;

TEST(Plan, FormatsAreLookedUpAndShapeWhatIsKeptApart) {
  ReportOptions o;
  EXPECT_EQ(make_plan(o).format->format, OutputFormat::kTop);
  EXPECT_FALSE(make_plan(o).grouping.threads);
  o.sort = "tid,symbol";
  EXPECT_TRUE(make_plan(o).grouping.threads) << "--sort tid needs threads apart";
  o.sort = "comm,dso,symbol";
  o.format = "pprof";
  EXPECT_TRUE(make_plan(o).grouping.threads) << "pprof labels every sample with its thread";
  o.format = "folded";
  o.wakers = true;
  const Plan folded = make_plan(o);
  EXPECT_FALSE(folded.grouping.threads);
  EXPECT_TRUE(folded.grouping.wakers);
  EXPECT_EQ(folded.format->format, OutputFormat::kFolded);
  o.format = "nonesuch";
  EXPECT_THROW(make_plan(o), Error);
}

// The command line as a perf user types it: `argv` after the program name.
std::optional<ReportOptions> parsed(std::vector<std::string> argv) {
  argv.insert(argv.begin(), "ebprof-report");
  std::vector<char*> args;
  for (std::string& a : argv)
    args.push_back(a.data());
  ReportOptions o;
  if (parse_command_line(static_cast<int>(args.size()), args.data(), o))
    return std::nullopt;
  return o;
}

TEST(CommandLine, SpeaksPerf) {
  // -i takes one file each time: `-i w.data script` reads w.data.
  std::optional<ReportOptions> o = parsed({"-i", "w.data", "script"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->inputs, std::vector<std::string>{"w.data"});
  EXPECT_EQ(o->format, "script");
  EXPECT_EQ(make_plan(*o).format->format, OutputFormat::kScript);
  o = parsed({"-i", "a.data", "-i", "b.data"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->inputs, (std::vector<std::string>{"a.data", "b.data"}));
  o = parsed({"script", "s.data"});
  ASSERT_TRUE(o);
  EXPECT_EQ(make_plan(*o).inputs, std::vector<std::string>{"s.data"});

  o = parsed({"--stdio", "--no-children", "--sort", "sym", "-c", "app", "-d", "libc.so.6", "-S",
              "malloc", "--percent-limit", "2.5", "--max-stack", "8"});
  ASSERT_TRUE(o);
  const Plan plan = make_plan(*o);
  EXPECT_EQ(plan.top.sort, std::vector<SortKey>{SortKey::kSymbol});
  EXPECT_FALSE(plan.top.children);
  EXPECT_EQ(plan.top.percent_limit, 2.5);
  EXPECT_EQ(plan.samples.comms, std::vector<std::string>{"app"});
  EXPECT_EQ(plan.stacks.dsos, std::vector<std::string>{"libc.so.6"});
  EXPECT_TRUE(plan.stacks.symbol);
  EXPECT_EQ(plan.stacks.max_stack, 8u);

  o = parsed({"-g"});
  ASSERT_TRUE(o);
  EXPECT_EQ(make_plan(*o).top.call_graph.mode, CallGraphMode::kGraph);
  o = parsed({"--call-graph", "folded,1"});
  ASSERT_TRUE(o);
  EXPECT_EQ(make_plan(*o).top.call_graph.mode, CallGraphMode::kFolded);
  EXPECT_EQ(make_plan(*o).top.call_graph.min_percent, 1.0);
  EXPECT_EQ(make_plan(*parsed({})).top.call_graph.mode, CallGraphMode::kGraph) << "as perf";
  EXPECT_EQ(make_plan(*parsed({"--call-graph", "none"})).top.call_graph.mode, CallGraphMode::kNone);
  // perf's -g grammar, its optional argument apart or attached, and -G.
  EXPECT_EQ(make_plan(*parsed({"-g", "caller"})).top.call_graph.mode, CallGraphMode::kCaller);
  EXPECT_EQ(make_plan(*parsed({"-gnone"})).top.call_graph.mode, CallGraphMode::kNone);
  o = parsed({"-g", "caller,0.5,callee", "-n", "5"});
  ASSERT_TRUE(o);
  EXPECT_EQ(make_plan(*o).top.call_graph.mode, CallGraphMode::kGraph) << "the later order wins";
  EXPECT_EQ(make_plan(*o).top.rows, 5u);
  EXPECT_EQ(make_plan(*parsed({"-G"})).top.call_graph.mode, CallGraphMode::kCaller);
  EXPECT_EQ(make_plan(*parsed({"-g", "script"})).format->format, OutputFormat::kScript)
      << "a subcommand is not -g's argument";
  const std::string here = testing::TempDir() + "/g.data";
  std::ofstream(here) << "";
  o = parsed({"diff", "-g", here, here});
  ASSERT_TRUE(o) << "a recording is not -g's argument either";
  EXPECT_EQ(o->files, (std::vector<std::string>{here, here}));
  EXPECT_TRUE(make_plan(*parsed({})).top.children_column);
  EXPECT_FALSE(make_plan(*parsed({"--no-children"})).top.children_column);

  // perf diff's defaults: the last recording against the one before it.
  o = parsed({"diff"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->files, (std::vector<std::string>{"ebprof.data.old", "ebprof.data"}));
  o = parsed({"diff", "new.data"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->files, (std::vector<std::string>{"ebprof.data.old", "new.data"}));

  o = parsed({"--header-only"});
  ASSERT_TRUE(o);
  EXPECT_EQ(make_plan(*o).command, Command::kInfo);
  o = parsed({"--header"});
  ASSERT_TRUE(o);
  EXPECT_TRUE(make_plan(*o).header);
  EXPECT_EQ(make_plan(*o).command, Command::kReport);

  // --help lists choices readably, and ends with examples.
  testing::internal::CaptureStdout();
  EXPECT_FALSE(parsed({"--help"}));
  const std::string help = testing::internal::GetCapturedStdout();
  EXPECT_NE(help.find("{comm | pid | comm,pid | pid,comm | none}"), std::string::npos) << help;
  EXPECT_NE(help.find("--view TEXT:{oncpu,offcpu,wall}"), std::string::npos) << help;
  EXPECT_NE(help.find("Examples:\n  ebprof-report "), std::string::npos) << help;

  testing::internal::CaptureStderr();
  EXPECT_FALSE(parsed({"--children", "--no-children"}));
  EXPECT_FALSE(parsed({"--percent-limit", "101"}));
  testing::internal::GetCapturedStderr();
}

TEST(Plan, InputsFollowTheCommand) {
  ReportOptions o;
  EXPECT_EQ(make_plan(o).inputs, std::vector<std::string>{"ebprof.data"});
  o.command = Command::kInfo;
  o.files = {"a.data"};
  EXPECT_EQ(make_plan(o).inputs, std::vector<std::string>{"a.data"});
  EXPECT_TRUE(make_plan(o).samples.include_idle) << "info counts everything";
  o.inputs_given = true;
  o.inputs = {"b.data"};
  EXPECT_EQ(make_plan(o).inputs, (std::vector<std::string>{"b.data", "a.data"}));
  o.command = Command::kDiff;
  EXPECT_THROW(make_plan(o), Error) << "diff takes BASE NEW, not -i";
  o.inputs_given = false;
  o.files = {"base.data", "new.data"};
  EXPECT_EQ(make_plan(o).inputs.size(), 2u);
  o.format = "script";
  EXPECT_THROW(make_plan(o), Error) << "diff cannot write script";
  o.command = Command::kMerge;
  EXPECT_THROW(make_plan(o), Error) << "merge needs -o";
}

TEST(Plan, SplitIsPprofIntoADirectoryBySlicesOfASecondOrMore) {
  ReportOptions o;
  o.format = "pprof";
  o.output = "slices";
  o.split = "5m";
  const Plan plan = make_plan(o);
  EXPECT_EQ(plan.split_ns, 300'000'000'000u);
  EXPECT_EQ(plan.samples.split_ns, plan.split_ns) << "the load tells slices apart";
  o.split = "90";
  EXPECT_EQ(make_plan(o).split_ns, 90'000'000'000u) << "seconds alone";
  for (const char* bad : {"0s", "1.5s", "10x", "s", "400d"}) {
    o.split = bad;
    EXPECT_THROW(make_plan(o), Error) << bad;
  }
  o.split = "1h";
  o.format = "folded";
  EXPECT_THROW(make_plan(o), Error) << "only pprof is split";
  o.format = "pprof";
  o.output.clear();
  EXPECT_THROW(make_plan(o), Error) << "the files need a directory";
}

TEST(Plan, FollowIsTheTopTableOnTheTerminal) {
  ReportOptions o;
  o.follow = true;
  EXPECT_TRUE(make_plan(o).follow);
  o.format = "folded";
  EXPECT_THROW(make_plan(o), Error);
  o.format = "top";
  o.output = "top.txt";
  EXPECT_THROW(make_plan(o), Error);
}

// --follow over --switch-output: the files renamed since it began, then
// the one being written; an earlier rotation's and unrelated files left out.
TEST(Follow, ARotationIsOneSeries) {
  EXPECT_TRUE(rotated_from("h.data.2026120723135167", "h.data"));
  EXPECT_TRUE(rotated_from("h.data.2026120723135167-2", "h.data"));
  EXPECT_FALSE(rotated_from("h.data.old", "h.data"));
  EXPECT_FALSE(rotated_from("h.data.2026120723135167-", "h.data"));
  EXPECT_FALSE(rotated_from("h.data.202612072313516", "h.data"));
  EXPECT_FALSE(rotated_from("h.datb.2026120723135167", "h.data"));

  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "series";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string name = (dir / "h.data").string();
  auto touch = [](const std::string& path) { std::ofstream(path) << "x"; };
  touch(name + ".2020010100000000");  // an earlier series
  touch(name + ".old");
  touch(name);
  const FollowedSeries series(name);
  EXPECT_EQ(series.files(), std::vector<std::string>{name});
  std::filesystem::rename(name, name + ".2026120723135167");
  EXPECT_EQ(series.files(), std::vector<std::string>{name + ".2026120723135167"})
      << "between a switch's rename and its new file";
  touch(name);
  touch(name + ".2026120723135167-1");
  EXPECT_EQ(series.files(), (std::vector<std::string>{name + ".2026120723135167",
                                                      name + ".2026120723135167-1", name}));
}

TEST(Plan, LabelsChooseWhatPprofKeepsApart) {
  ReportOptions o;
  o.format = "pprof";
  EXPECT_TRUE(make_plan(o).grouping.threads) << "tid and cpu labels by default";
  o.labels = "pid,comm";
  const Plan plan = make_plan(o);
  EXPECT_FALSE(plan.grouping.threads) << "no label shows threads: one sample for all";
  EXPECT_TRUE(plan.pprof_labels.pid && plan.pprof_labels.comm && !plan.pprof_labels.tid);
  o.labels = "none";
  EXPECT_FALSE(make_plan(o).pprof_labels.comm);
  EXPECT_FALSE(plan.grouping.cgroups) << "no cgroup label: cgroups merged";
  o.labels = "comm,cgroup";
  EXPECT_TRUE(make_plan(o).grouping.cgroups);
  for (const char* bad : {"pid,", "host"}) {
    o.labels = bad;
    EXPECT_THROW(make_plan(o), Error) << bad;
  }
}

TEST(Plan, BadValuesAreOneLineErrors) {
  auto bad = [](auto edit) {
    ReportOptions o;
    edit(o);
    try {
      make_plan(o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(bad([](ReportOptions& o) { o.sort = "comm,bogus"; }),
            "--sort bogus: unknown key; use comm, pid, tid, cpu, cgroup, dso, state, symbol (or "
            "sym)");
  EXPECT_EQ(bad([](ReportOptions& o) { o.view = "sideways"; }),
            "--view sideways: use oncpu, offcpu or wall");
  EXPECT_EQ(bad([](ReportOptions& o) { o.unwind = "guess"; }), "--unwind guess: use dwarf or fp");
  EXPECT_EQ(bad([](ReportOptions& o) {
              o.format = "folded";
              o.call_graph = "caller";
            }),
            "-g caller: --format folded draws no call paths under rows (the top table "
            "does): leave it out");
  EXPECT_EQ(bad([](ReportOptions& o) { o.symbol = "("; }).rfind("--symbol (: not a regular", 0),
            0u);
  EXPECT_EQ(bad([](ReportOptions& o) { o.time = "3,2"; }),
            "--time 3,2: the end is before the start");
  EXPECT_EQ(bad([](ReportOptions& o) { o.normalize = "x"; }),
            "--normalize x: use none, total, per-second or per-cpu-second");
}

TEST(Plan, TimeWeightIsForClocksAndIntervals) {
  ReportOptions o;
  std::vector<Recording> recordings(1);
  recordings[0].info.event = "cpu-clock";
  recordings[0].counts.push_back({SampleKey{}, {1, 10}});
  const std::span<const Recording> sides[] = {recordings};
  EXPECT_EQ(unit_for(make_plan(o), sides), Unit::kSamples);
  o.weight = "time";
  EXPECT_EQ(unit_for(make_plan(o), sides), Unit::kMicroseconds);
  recordings[0].info.event = "page-faults";
  EXPECT_THROW(unit_for(make_plan(o), sides), Error) << "page faults are events, not time";
  o.format = "pprof";
  EXPECT_EQ(unit_for(make_plan(o), sides), Unit::kSamples) << "pprof carries both";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The report of `path` in `format`, names from the recording alone.
std::string report_of(const std::string& path, const std::string& format) {
  ReportOptions o;
  o.inputs = {path};
  o.format = format;
  o.symfs = "/nonexistent-symfs";
  o.output = ::testing::TempDir() + "/report.out";
  run_report(make_plan(o));
  return slurp(o.output);
}

std::string script_of(const std::string& path) {
  return report_of(path, "script");
}

// A lost Source frame must not run two recordings together: the next
// header starts the next source, for the counts and for script alike.
TEST(Merge, ASourceFrameLostToDamageStillSeparatesRecordings) {
  const std::string a = write_small_recording("lost-a.data");
  const std::string b = write_small_recording("lost-b.data");
  const std::string merged = ::testing::TempDir() + "/lost-source.data";
  merge_recordings(merged, {a, b});
  const std::string whole = script_of(merged);
  EXPECT_EQ(whole, script_of(a) + script_of(b));
  const std::vector<uint64_t> sources = frames_of(merged, "source");
  ASSERT_EQ(sources.size(), 2u);
  damage_frame(merged, sources[1]);
  NameTable names;
  std::vector<Recording> recordings;
  load_recordings(merged, {}, names, recordings);
  ASSERT_EQ(recordings.size(), 2u);
  for (const Recording& r : recordings) {
    EXPECT_EQ(r.total_samples, 2u);
    EXPECT_EQ(r.processes.at(7).size(), 1u);
  }
  EXPECT_NE(recordings.back().warning.find("checksum"), std::string::npos)
      << recordings.back().warning;
  EXPECT_EQ(script_of(merged), whole);
}

// A merged file cut exactly where a source begins reads whole up to there:
// its end frame is what says the later sources are missing.
TEST(Merge, AFileCutAtASourceBoundarySaysSourcesAreMissing) {
  const std::string a = write_small_recording("boundary-a.data");
  const std::string b = write_small_recording("boundary-b.data");
  const std::string merged = ::testing::TempDir() + "/boundary.data";
  merge_recordings(merged, {a, b});
  auto warning_of = [](const std::string& path) {
    NameTable names;
    std::vector<Recording> out;
    load_recordings(path, {}, names, out);
    return out.back().warning;
  };
  EXPECT_EQ(warning_of(merged), "") << "whole: nothing to say";
  const std::vector<uint64_t> sources = frames_of(merged, "source");
  ASSERT_EQ(sources.size(), 2u);
  std::filesystem::resize_file(merged, sources[1]);
  const std::string cut = warning_of(merged);
  EXPECT_NE(cut.find("ends before its end frame (after 1 source(s))"), std::string::npos) << cut;
}

// A cpu-clock recording at 99 Hz of `batches`, written at `name` in the
// test's directory: its path.
std::string write_batches(const std::string& name, std::vector<format::SampleBatch> batches) {
  const std::string path = ::testing::TempDir() + "/" + name;
  auto w = format::RecordingWriter::create(path);
  format::RecordingInfo info;
  info.event = "cpu-clock";
  info.sample_frequency = 99;
  w.write(info);
  for (const format::SampleBatch& b : batches)
    w.write(b);
  w.close();
  return path;
}

// An input read with a damaged frame is merged as the reader recovered it,
// and the merged file reads back the same.
TEST(Merge, ADamagedInputReadsBackAsItWasRecovered) {
  format::SampleBatch first;
  first.stacks = {{{}, {0x1004}}};
  first.comms = {"app"};
  first.samples = {{1'500'000'000, 7, 7, 1, 0, 0}};
  format::SampleBatch second;
  second.first_stack_id = 1;
  second.first_comm_id = 1;
  second.stacks = {{{}, {0x1008}}};
  second.comms = {"app"};
  second.samples = {{1'600'000'000, 7, 7, 1, 1, 1}, {1'700'000'000, 7, 7, 1, 1, 1}};
  const std::string path = write_batches("two-batches.data", {first, second});
  damage_frame(path, frames_of(path, "samples").front());
  auto load = [](const std::string& p) {
    NameTable names;
    std::vector<Recording> out;
    load_recordings(p, {}, names, out);
    return out;
  };
  ASSERT_EQ(load(path)[0].total_samples, 2u);
  const std::string merged = ::testing::TempDir() + "/two-batches-merged.data";
  MergeResult r = merge_recordings(merged, {path});
  ASSERT_EQ(r.warnings.size(), 1u);
  const std::vector<Recording> back = load(merged);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].total_samples, 2u);
  EXPECT_TRUE(back[0].warning.empty()) << back[0].warning;
  EXPECT_EQ(script_of(merged), script_of(path));
}

// A frame-pointer walk cut at the most frames a sample holds gets a root
// that says so, in every output that shows roots; a shorter one does not.
TEST(Run, AStackCutAtTheFrameLimitEndsInATruncatedRoot) {
  format::SampleBatch b;
  b.comms = {"app"};
  b.stacks.resize(2);
  for (uint64_t f = 0; f < format::kMaxStackFrames; ++f)
    b.stacks[0].user.push_back(0x400000 + f * 16);
  b.stacks[1].user = {0x400000, 0x400010};
  b.samples = {{1'000'000'000, 7, 7, 0, 0, 0}, {1'000'000'001, 7, 7, 0, 1, 0}};
  const std::string folded = report_of(write_batches("deep-stack.data", {b}), "folded");
  EXPECT_NE(folded.find("app;[truncated: deeper than 127 frames];"), std::string::npos) << folded;
  EXPECT_EQ(std::count(folded.begin(), folded.end(), '\n'), 2) << folded;
  EXPECT_EQ(folded.find("[truncated", folded.find('\n')), std::string::npos)
      << "the short stack has none: " << folded;
}

// A recording of process 7 spending its one sample in `function` (of a
// binary of its own build-id), at `name`.
std::string write_one_function(const std::string& name, const std::string& function) {
  const std::string path = ::testing::TempDir() + "/" + name;
  auto w = format::RecordingWriter::create(path);
  format::RecordingInfo info;
  info.event = "cpu-clock";
  info.sample_frequency = 99;
  w.write(info);
  w.write(format::ProcessInfo{7, "app", 0, {{0x1000, 0x2000, 0, "/bin/app", function}}, ""});
  w.write(format::EmbeddedSymbols{function, "/bin/app", {{0, 0, 0x2000}}, {{0, 0x10, function}}});
  format::SampleBatch b;
  b.stacks = {{{}, {0x1004}}};
  b.comms = {"app"};
  b.samples = {{1'000'000'000, 7, 7, 0, 0, 0}};
  w.write(b);
  w.close();
  return path;
}

// diff's two sides are two recordings of one pid with stacks of the same
// ids: each side's stacks are its own (the new side was once named as the
// base's).
TEST(Run, DiffNamesEachSidesStacksFromItsOwnRecording) {
  ReportOptions o;
  o.command = Command::kDiff;
  o.files = {write_one_function("before.data", "before_fn"),
             write_one_function("after.data", "after_fn")};
  o.format = "folded";
  o.symfs = "/nonexistent-symfs";
  o.output = ::testing::TempDir() + "/diff.out";
  run_report(make_plan(o));
  const std::string folded = slurp(o.output);
  EXPECT_NE(folded.find("app;before_fn 1 0\n"), std::string::npos) << folded;
  EXPECT_NE(folded.find("app;after_fn 0 1\n"), std::string::npos) << folded;
}

// --split: one profile per slice holding samples, named and stamped by
// its slice's start, lasting the slice: what Pyroscope and Parca ingest.
TEST(Split, SlicesAreProfilesOfTheirOwnTime) {
  Profile profile = make_profile({{"app", 1, 1, 0, 4, {fn("f")}},
                                  {"app", 1, 1, 0, 6, {fn("g")}},
                                  {"app", 1, 1, 0, 5, {fn("f")}}},
                                 summary_of(15, 180));
  // 2026-12-01 10:00, 10:01 and 10:03 UTC, in slices of a minute.
  const uint64_t minute = 60'000'000'000;
  const uint32_t first = static_cast<uint32_t>(1'796'119'200'000'000'000 / minute);
  profile.stacks[0].key.slice = first;
  profile.stacks[1].key.slice = first;
  profile.stacks[2].key.slice = first + 3;
  const std::string dir = (std::filesystem::path(testing::TempDir()) / "slices").string();
  std::filesystem::remove_all(dir);
  const SliceWriter pprof = [](std::ostream& out, const Profile& slice) {
    write_pprof(out, slice);
  };
  ASSERT_EQ(write_slices(dir, profile, minute, ".pb.gz", pprof), 2u);
  struct Expected {
    const char* name;
    uint64_t start_ns;
    int64_t samples;
  };
  for (const Expected& e : {Expected{"20261201T100000Z.pb.gz", 1'796'119'200'000'000'000, 10},
                            Expected{"20261201T100300Z.pb.gz", 1'796'119'380'000'000'000, 5}}) {
    SCOPED_TRACE(e.name);
    std::ifstream in(dir + "/" + e.name, std::ios::binary);
    ASSERT_TRUE(in) << "no file";
    const perftools::profiles::Profile p =
        decode_pprof(std::string(std::istreambuf_iterator<char>(in), {}));
    EXPECT_EQ(p.time_nanos(), static_cast<int64_t>(e.start_ns));
    EXPECT_EQ(p.duration_nanos(), static_cast<int64_t>(minute));
    int64_t samples = 0;
    for (const auto& sample : p.sample())
      samples += sample.value(0);
    EXPECT_EQ(samples, e.samples);
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 2);
  std::ofstream(dir + ".file") << "x";
  EXPECT_THROW(write_slices(dir + ".file", profile, minute, ".pb.gz", pprof), Error);
}

// What this process holds of heap and private writable mappings: what
// RLIMIT_DATA, and so the report's memory budget, counts.
uint64_t data_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmData:", 0) == 0)
      return std::stoull(line.substr(7)) * 1024;  // in kB
  return 0;
}

// A recording that asks for more memory than the report may take stops it
// with one line that names the budget, and leaves the budget lifted; one
// that fits is reported under the same budget.
TEST(Run, ARecordingPastTheMemoryBudgetIsOneLine) {
  if (!memory_budget_holds())
    GTEST_SKIP() << "a sanitizer's shadow memory is what RLIMIT_DATA counts: no budget holds";
  // 60k distinct stacks of 127 frames: 60 MB as the report holds them,
  // 1.4 MB on disk.
  format::SampleBatch b;
  b.comms = {"app"};
  for (uint32_t i = 0; i < 60'000; ++i) {
    format::Stack& stack = b.stacks.emplace_back();
    for (uint64_t f = 0; f < 127; ++f)
      stack.user.push_back(0x400000 + f * 16);
    stack.user[0] += i;
    b.samples.push_back({1'000'000'000 + i, 7, 7, 0, i, 0});
  }
  const std::string big = write_batches("many-deep-stacks.data", {std::move(b)});
  ReportOptions o;
  o.symfs = "/nonexistent-symfs";
  o.format = "folded";
  o.output = ::testing::TempDir() + "/budget.out";
  o.max_memory = data_bytes() + (24 << 20);
  o.inputs = {write_small_recording("within-budget.data")};
  EXPECT_NO_THROW(run_report(make_plan(o))) << "a small report fits";
  o.inputs = {big};
  try {
    run_report(make_plan(o));
    ADD_FAILURE() << "60 MB of stacks fit a 24 MB budget";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find("out of memory: the report needs more than its "), 0u) << message;
    EXPECT_NE(message.find("--max-memory"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  std::vector<char> after(64 << 20, 1);  // the budget no longer holds
  EXPECT_EQ(after.back(), 1);
}

}  // namespace
}  // namespace ebprof::report
