// The load stage: recordings read into plain structs and counted by key,
// the sample filter, merged files, and what `info` and `dump` say of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "common/error.h"
#include "recording_fakes.h"
#include "report/load/facts.h"
#include "report/load/load.h"
#include "report/load/merge.h"
#include "report/load/recording.h"
#include "report/load/sample_filter.h"
#include "report/load/sample_stream.h"
#include "report/load/summary.h"
#include "report/write/dump_writer.h"
#include "report/write/info_writer.h"

namespace ebprof::report {
namespace {

using namespace fakes;

std::vector<Recording> load(const std::string& path, const SampleFilter& filter = {}) {
  NameTable names;
  std::vector<Recording> out;
  load_recordings(path, filter, names, out);
  return out;
}

TEST(SampleFilter, ListsTimeAndIdle) {
  const uint64_t start = 100'000'000'000;  // the recording began at 100 s
  format::Sample s{start + 2'500'000'000, 7, 8, 1, 0, 0};
  const StartTime clock{start, 0};
  EXPECT_TRUE(keeps({}, s, "app", clock));
  EXPECT_FALSE(keeps({}, format::Sample{start, 0, 0, 0, 0, 0}, "swapper/0", clock));
  EXPECT_TRUE(keeps({.include_idle = true}, format::Sample{start, 0, 0, 0, 0, 0}, "x", clock));
  EXPECT_FALSE(keeps({.pids = {9}}, s, "app", clock));
  EXPECT_TRUE(keeps({.tids = {8, 9}}, s, "app", clock));
  EXPECT_FALSE(keeps({.cpus = {0}}, s, "app", clock));
  EXPECT_FALSE(keeps({.comms = {"other"}}, s, "app", clock));
  SampleFilter window;
  parse_time_window("2,3", window);  // relative: [102 s, 103 s)
  EXPECT_TRUE(keeps(window, s, "app", clock));
  parse_time_window(",2.5", window);
  EXPECT_FALSE(keeps(window, s, "app", clock));  // the end is exclusive
  parse_time_window("102.6,", window);           // absolute
  EXPECT_FALSE(keeps(window, s, "app", clock));
  EXPECT_THROW(parse_time_window("3", window), Error);
  EXPECT_THROW(parse_time_window("3,2", window), Error);
  EXPECT_THROW(parse_time_window("a,b", window), Error);
}

// --time as dates, as rotated files are looked through: the recording's
// two clocks place each sample.
TEST(SampleFilter, TimeAsDatesLocalOrUtc) {
  // Started 2026-12-01 10:00:00 UTC, at 100 s of CLOCK_MONOTONIC.
  const StartTime start{100'000'000'000, 1'796'119'200'000'000'000};
  const format::Sample at_5s{start.monotonic_ns + 5'000'000'000, 7, 8, 1, 0, 0};
  SampleFilter f;
  parse_time_window("2026-12-01T10:00:04Z,2026-12-01T10:00:06Z", f);
  EXPECT_TRUE(keeps(f, at_5s, "app", start));
  parse_time_window("2026-12-01T10:00:05.5Z,", f);
  EXPECT_FALSE(keeps(f, at_5s, "app", start));
  parse_time_window(",2026-12-01 10:00:05Z", f);
  EXPECT_FALSE(keeps(f, at_5s, "app", start)) << "the end is exclusive";
  parse_time_window("4,2026-12-01T10:00:05.001Z", f);  // seconds and a date together
  EXPECT_TRUE(keeps(f, at_5s, "app", start));
  // Local time: as the machine's zone says, here whatever TZ is.
  setenv("TZ", "CET-1", 1);  // UTC+1, as a POSIX zone: no tzdata needed
  tzset();
  parse_time_window("2026-12-01T11:00:04,2026-12-01T11:00:06", f);
  EXPECT_TRUE(keeps(f, at_5s, "app", start));
  unsetenv("TZ");
  tzset();
  for (const char* bad : {"2026-12-01T10:00,", "2026-13-01T10:00:00x,", ",2026-12-01T10:00:00+01"})
    EXPECT_THROW(parse_time_window(bad, f), Error) << bad;
  EXPECT_THROW(parse_time_window("2026-12-01T10:00:06Z,2026-12-01T10:00:05Z", f), Error);
}

// One key per distinct (process, thread, CPU, capture, comm, stack): the
// two samples differ by thread and CPU.
TEST(Recording, CountsSamplesByKey) {
  const std::vector<Recording> r = load(write_small_recording());
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].counts.size(), 2u);
  const auto& [key, values] = r[0].counts[1];
  EXPECT_EQ(key.stack.pid, 7u);
  EXPECT_EQ(key.tid, 8u);
  EXPECT_EQ(key.cpu, 2u);
  EXPECT_EQ(key.state, ThreadState::kOnCpu);
  EXPECT_EQ(values.count, 1u);
  EXPECT_EQ(values.weight, 1'000'000'000u / 99);
  EXPECT_EQ(load(write_small_recording(), {.tids = {8}})[0].total_samples, 1u);
}

// Each key of a batch is settled once, however many samples it has: here
// the two threads' keys, with the process and capture of their samples.
TEST(Recording, SettlesEachKeysStackOnce) {
  NameTable names;
  std::vector<Recording> out;
  std::vector<StackRef> settled;
  load_recordings(
      write_small_recording(), {}, names, out,
      [&](const Recording&, const IdRuns<format::UserWindow>&, std::span<StackRef> refs) {
        settled.insert(settled.end(), refs.begin(), refs.end());
      });
  ASSERT_EQ(settled.size(), 2u) << "two threads' samples of one stack";
  EXPECT_EQ(settled[0], (StackRef{0, 7, 0, 0, kNoWindow}));
  EXPECT_EQ(settled[1], settled[0]);
}

// Recordings loaded after others are numbered after them, so that the
// stacks of two recordings of one process (diff's two sides) never pass
// for each other.
TEST(Recording, IsNumberedAfterThoseLoadedBefore) {
  NameTable names;
  const std::string path = write_small_recording();
  const std::vector<Recording> first = load_all(std::span(&path, 1), {}, names);
  const std::vector<Recording> second = load_all(std::span(&path, 1), {}, names, {}, 1);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(first[0].index, 0u);
  EXPECT_EQ(second[0].index, 1u);
  EXPECT_EQ(second[0].counts.at(0).first.stack.source, 1u);
}

// A --call-graph dwarf recording of `batches` batches of two windows and
// two samples each of one thread and stack (their own windows; the second
// of a later batch uses the previous batch's second window), whose samples
// reach `reach` windows back from their batch's first (0: as far as they
// like, as before 1.5).
std::string write_windowed_recording(uint32_t reach, int batches) {
  std::string path = ::testing::TempDir() + "/windowed.data";
  auto w = format::RecordingWriter::create(path);
  format::RecordingInfo info;
  info.call_graph = format::CallGraph::kDwarf;
  info.user_stack_bytes = 8192;
  info.user_registers = {16, 7};
  info.stack_block_bytes = 128;
  info.window_reach = reach;
  w.write(info);
  w.write(format::ProcessInfo{7, "app", 0, {{0x1000, 0x2000, 0, "/bin/app"}}, ""});
  for (int i = 0; i < batches; ++i) {
    format::SampleBatch b;
    const auto n = static_cast<uint32_t>(i);
    b.first_stack_id = b.first_comm_id = i == 0 ? 0 : 1;
    if (i == 0) {
      b.stacks = {{{}, {0x1004}}};
      b.comms = {"app"};
    }
    b.first_block_id = n, b.first_window_id = 2 * n;
    b.blocks.assign(128, static_cast<char>(i));
    for (uint64_t rip : {0x1004, 0x1008})
      b.windows.push_back({{rip, 0x7000}, 0x7000, 16, format::UserAbi::k64, {n}});
    const uint32_t second = i == 0 ? 1 : 2 * n - 1;
    b.samples = {{100 + n, 7, 7, 0, 0, 0, 0, {}, format::kNoWaker, 0, 0, 0, 2 * n},
                 {200 + n, 7, 7, 0, 0, 0, 0, {}, format::kNoWaker, 0, 0, 0, second}};
    w.write(b);
  }
  w.close();
  return path;
}

// Windows are settled a few batches after their own (once the maps they
// need are in), samples that unwind alike then count as one key, and only
// the windows later samples can reach stay in memory.
TEST(Recording, SettlesWindowsAsTheFileStreamsAndLetsThemGo) {
  NameTable names;
  std::vector<Recording> out;
  std::vector<std::pair<size_t, std::vector<StackRef>>> settled;  // windows read, refs
  const SettleStacks settle = [&](const Recording&, const IdRuns<format::UserWindow>& windows,
                                  std::span<StackRef> refs) {
    settled.emplace_back(windows.size(), std::vector(refs.begin(), refs.end()));
    for (StackRef& ref : refs) {
      ASSERT_NE(windows.find(ref.window), nullptr) << "window " << ref.window << " let go";
      ref.window %= 2;  // every window unwinds like the first of its kind
    }
  };
  load_recordings(write_windowed_recording(2, 6), {}, names, out, settle);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(settled.size(), 6u);
  const size_t windows_read[] = {6, 8, 10, 12, 12, 12};  // two batches late, then at the end
  for (size_t i = 0; i < settled.size(); ++i) {
    EXPECT_EQ(settled[i].first, windows_read[i]) << "batch " << i;
    ASSERT_EQ(settled[i].second.size(), 2u) << "batch " << i;
  }
  EXPECT_EQ(settled[3].second[0].window, 6u);
  EXPECT_EQ(settled[3].second[1].window, 5u);
  const Recording& r = out[0];
  ASSERT_EQ(r.counts.size(), 2u) << "samples that unwind alike are one key";
  EXPECT_EQ(r.counts[0].first.stack.window, 0u);
  EXPECT_EQ(r.counts[0].second.count, 6u);
  EXPECT_EQ(r.counts[1].first.stack.window, 1u);
  EXPECT_EQ(r.counts[1].second.count, 6u);
  EXPECT_EQ(r.windows.size(), 12u);
  EXPECT_EQ(r.windows.find(9), nullptr) << "no sample can reach it any more";
  EXPECT_NE(r.windows.find(10), nullptr);

  // An older file promises no reach: every window stays.
  out.clear();
  load_recordings(write_windowed_recording(0, 6), {}, names, out, settle);
  for (uint32_t id = 0; id < 12; ++id)
    EXPECT_NE(out[0].windows.find(id), nullptr) << "window " << id;
}

// The second pass of a per-sample output settles each batch's windows as
// the load did, its own copy of them in hand: each sample's key is then
// one the load counted.
TEST(SampleStream, SettlesWindowsAsTheLoadDid) {
  const std::string path = write_windowed_recording(2, 6);
  NameTable names;
  std::vector<Recording> out;
  const SettleStacks settle = [](const Recording&, const IdRuns<format::UserWindow>& windows,
                                 std::span<StackRef> refs) {
    for (StackRef& ref : refs)
      ref.window = windows.find(ref.window) ? ref.window % 2 : kNoWindow;
  };
  load_recordings(path, {}, names, out, settle);
  size_t samples = 0;
  stream_samples(
      path, out, {}, names,
      [&](const Recording& r, const SampleKey& key, const format::Sample&) {
        ++samples;
        EXPECT_TRUE(std::any_of(r.counts.begin(), r.counts.end(),
                                [&](const auto& c) { return c.first == key; }))
            << "window " << key.stack.window;
      },
      settle);
  EXPECT_EQ(samples, 12u);
}

// --time: the header's length is the window's, not the recording's
// (issue 26). The small recording runs from 1 s to 3 s.
TEST(Load, TheTimeWindowIsTheLengthShown) {
  EXPECT_DOUBLE_EQ(duration_s(load(write_small_recording())[0]), 2.0);
  SampleFilter window;
  parse_time_window("0.25,0.75", window);
  EXPECT_DOUBLE_EQ(duration_s(load(write_small_recording(), window)[0]), 0.5);
  parse_time_window("1.5,", window);  // absolute, to the end
  EXPECT_DOUBLE_EQ(duration_s(load(write_small_recording(), window)[0]), 1.5);
}

// Two dumps of one flight recorder, a file given twice, a merged file read
// with its inputs: recordings of one host over the same time hold the same
// samples, each counted once, and the report says so. Another host's, or
// another boot's, at the same clock times are other samples.
TEST(Load, OverlappingRecordingsOfOneHostCountEachSampleOnce) {
  const std::string a = write_small_recording("overlap-a.data");
  const std::string b = write_small_recording("overlap-b.data");
  auto summary_of = [](const std::vector<std::string>& paths) {
    NameTable names;
    return summarize(load_all(paths, {}, names, {}, 0));
  };
  const RecordingSummary once = summary_of({a});
  const RecordingSummary twice = summary_of({a, b});
  EXPECT_EQ(twice.samples, once.samples);
  EXPECT_EQ(twice.duplicate_samples, 2u);
  EXPECT_DOUBLE_EQ(twice.duration_s, once.duration_s) << "their shared time counted once";
  EXPECT_NE(twice.overlap.find("recordings of one host overlap (" + a + " and " + b),
            std::string::npos)
      << twice.overlap;

  // The same times on another host.
  auto w = format::RecordingWriter::create(::testing::TempDir() + "/overlap-other.data");
  struct Copy : format::RecordingVisitor {
    format::RecordingWriter& w;
    explicit Copy(format::RecordingWriter& writer) : w(writer) {}
    void on_info(format::RecordingInfo&& info) override {
      info.hostname = "other";
      w.write(info);
    }
    void on_samples(format::SampleBatch&& batch) override { w.write(batch); }
    void on_end(format::RecordingEnd&& end) override { w.write(end); }
  } copy(w);
  format::read_recording(a, copy);
  w.close();
  const RecordingSummary hosts = summary_of({a, ::testing::TempDir() + "/overlap-other.data"});
  EXPECT_EQ(hosts.samples, 2 * once.samples);
  EXPECT_EQ(hosts.duplicate_samples, 0u);
  EXPECT_EQ(hosts.overlap, "");
}

TEST(InfoWriter, SaysWhatTheRecordingIsAndHolds) {
  const std::vector<Recording> r = load(write_small_recording(), {.include_idle = true});
  std::ostringstream out;
  write_info(out, describe_recording(r[0]), {{UnnamedReason::kBinaryNotFound, 2}});
  const std::string text = out.str();
  for (const char* line :
       {"format          1.10, written by ebprof 9.9.9\n", "command line    ebprof-record -a\n",
        "event           cpu-clock at 99 Hz on 4 CPUs", "duration        2.00 s\n",
        "samples         2\n", "processes       1 (1 maps capture, 1 mapping)\n",
        "lost            2 (buffer full: 2)\n", "lost where      cpu 1: 2; reported from ",
        "partial stacks  1 (user stack unreadable: 1)\n",
        "unnamed frames  binary not found in 2 samples (100.0%)\n",
        "embedded        1 binary, 1 function symbol\n",
        "symbol coverage 1 of 1 sampled binaries with a build-id have embedded symbols",
        "\nheader                 1", "\nheader-copy            1", "\nsamples                1",
        "\nelf-symbols            1", "\ncopy                   1"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
}

TEST(DumpWriter, PrintsEveryFrameInOrder) {
  std::ostringstream out;
  write_dump(out, write_small_recording());
  const std::string text = out.str();
  size_t at = 0;
  for (const char* piece :
       {"# frame 0 at byte 16: header", "host box", "# frame 1 at byte", ": header-copy",
        "# frame 2 at byte", "pid 7 comm app", "/bin/app build-id abcd debuglink app.debug",
        "elf-symbols", "0x1000 size 0x10 f", "stack 0", "user: 0x1004", "comm 0 app",
        "cgroup 0 id 4660 /system.slice/app.service",
        "sample time 1500000000 pid 7 tid 7 cpu 1 stack 0 comm 0 cgroup 0\n",
        "sample time 1600000000 pid 7 tid 8 cpu 2 stack 0 comm 0\n",
        // The maps again, after the batch (1.6; the symbols too before 1.9).
        ": copy, ", "losses at 2000000000", "cpu 1 lost 2 buffer full",
        "cpu 0 partial 1 user stack unreadable", "lost 2 buffer full",
        "partial 1 user stack unreadable", "# 8 frames, format 1.10"}) {
    size_t next = text.find(piece, at);
    ASSERT_NE(next, std::string::npos) << piece << "\n" << text;
    at = next;
  }
}

TEST(Merge, KeepsEachRecordingAsASourceAndEmbedsSymbolsOnce) {
  const std::string a = write_small_recording("merge-a.data");
  const std::string b = write_small_recording("merge-b.data");
  const std::string merged = ::testing::TempDir() + "/merged.data";
  MergeResult r = merge_recordings(merged, {a, b});
  EXPECT_EQ(r.sources, 2u);
  EXPECT_EQ(r.samples, 4u);
  EXPECT_TRUE(r.warnings.empty());
  const std::vector<Recording> sources = load(merged);
  ASSERT_EQ(sources.size(), 2u);
  for (const Recording& p : sources) {
    EXPECT_EQ(p.total_samples, 2u);
    EXPECT_EQ(p.info.hostname, "box");
    EXPECT_EQ(p.processes.at(7).size(), 1u);
    EXPECT_TRUE(p.end);
    EXPECT_EQ(p.embedded_symbols->at("\xab\xcd").symbols().size(), 1u);
  }
  EXPECT_EQ(sources[0].source.path, a);
  EXPECT_EQ(sources[1].source.path, b);
  EXPECT_EQ(sources[1].source.index, 1u);
  EXPECT_EQ(sources[1].index, 1u);

  // The same symbols twice are written once.
  std::ostringstream dump;
  write_dump(dump, merged);
  const std::string text = dump.str();
  size_t tables = 0;
  for (size_t at = text.find("elf-symbols"); at != std::string::npos;
       at = text.find("elf-symbols", at + 1))
    ++tables;
  EXPECT_EQ(tables, 1u) << text;

  // A merged file merges again: its sources stay sources.
  const std::string twice = ::testing::TempDir() + "/merged-twice.data";
  EXPECT_EQ(merge_recordings(twice, {merged, a}).sources, 3u);
  EXPECT_EQ(load(twice).size(), 3u);
  EXPECT_THROW(merge_recordings(twice, {a, ::testing::TempDir() + "/missing.data"}), Error);
  EXPECT_EQ(load(twice).size(), 3u) << "a failed merge keeps the file it would replace";
  EXPECT_FALSE(std::filesystem::exists(twice + ".partial"));
}

// CFI pieces (1.9) of one binary from two recordings: each piece once in
// the merged file, all of them read back as the binary's CFI.
TEST(Merge, WritesEachCfiPieceOnce) {
  auto with_pieces = [](const std::string& name, std::vector<uint64_t> fde_offsets) {
    std::string path = ::testing::TempDir() + "/" + name;
    auto w = format::RecordingWriter::create(path);
    w.write(format::RecordingInfo{});
    format::ElfCfi cfi{"\xab\xcd", "/bin/app", {{0, 0, 0x2000}}, 0x3000, {}, 0x4000, {}, 0x100};
    cfi.pieces.push_back({0, std::string(16, 'c'), false, 0});
    for (uint64_t at : fde_offsets)
      cfi.pieces.push_back({at, std::string(16, 'f'), true, 0x1000 + at});
    w.write(cfi);
    w.write(format::RecordingEnd{});
    w.close();
    return path;
  };
  const std::string merged = ::testing::TempDir() + "/merged-cfi.data";
  merge_recordings(merged,
                   {with_pieces("cfi-a.data", {16, 32}), with_pieces("cfi-b.data", {32, 48})});
  std::ostringstream dump;
  write_dump(dump, merged);
  const std::string text = dump.str();
  EXPECT_NE(text.find("(3 entries of 256 bytes)"), std::string::npos) << text;
  EXPECT_NE(text.find("(1 entries of 256 bytes)"), std::string::npos) << text;
  const std::vector<Recording> sources = load(merged);
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[1].embedded_cfi->at("\xab\xcd").pieces.size(), 4u);
}

}  // namespace
}  // namespace ebprof::report
