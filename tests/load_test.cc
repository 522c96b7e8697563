// The load stage: recordings read into plain structs and counted by key,
// the sample filter, merged files, and what `info` and `dump` say of them.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "common/error.h"
#include "recording_fakes.h"
#include "report/load/facts.h"
#include "report/load/merge.h"
#include "report/load/recording.h"
#include "report/load/sample_filter.h"
#include "report/write/dump_writer.h"
#include "report/write/info_writer.h"

namespace ebprof::report {
namespace {

using namespace fakes;

std::vector<Recording> load(const std::string& path, const SampleFilter& filter = {}) {
  CommTable comms;
  std::vector<Recording> out;
  load_recordings(path, filter, comms, out);
  return out;
}

TEST(SampleFilter, ListsTimeAndIdle) {
  const uint64_t start = 100'000'000'000;  // the recording began at 100 s
  format::Sample s{start + 2'500'000'000, 7, 8, 1, 0, 0};
  EXPECT_TRUE(keeps({}, s, "app", start));
  EXPECT_FALSE(keeps({}, format::Sample{start, 0, 0, 0, 0, 0}, "swapper/0", start));
  EXPECT_TRUE(keeps({.include_idle = true}, format::Sample{start, 0, 0, 0, 0, 0}, "x", start));
  EXPECT_FALSE(keeps({.pids = {9}}, s, "app", start));
  EXPECT_TRUE(keeps({.tids = {8, 9}}, s, "app", start));
  EXPECT_FALSE(keeps({.cpus = {0}}, s, "app", start));
  EXPECT_FALSE(keeps({.comms = {"other"}}, s, "app", start));
  SampleFilter window;
  parse_time_window("2,3", window);  // relative: [102 s, 103 s)
  EXPECT_TRUE(keeps(window, s, "app", start));
  parse_time_window(",2.5", window);
  EXPECT_FALSE(keeps(window, s, "app", start));  // the end is exclusive
  parse_time_window("102.6,", window);           // absolute
  EXPECT_FALSE(keeps(window, s, "app", start));
  EXPECT_THROW(parse_time_window("3", window), Error);
  EXPECT_THROW(parse_time_window("3,2", window), Error);
  EXPECT_THROW(parse_time_window("a,b", window), Error);
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
  EXPECT_EQ(values.time_ns, 1'000'000'000u / 99);
  EXPECT_EQ(load(write_small_recording(), {.tids = {8}})[0].total_samples, 1u);
}

// The observer hears of each stack once, as the batch that defines it is
// read, with the process and capture of its first sample.
TEST(Recording, TellsOfEachStackAsItIsRead) {
  CommTable comms;
  std::vector<Recording> out;
  std::vector<StackRef> seen;
  load_recordings(write_small_recording(), {}, comms, out,
                  [&](const Recording&, const StackRef& ref) { seen.push_back(ref); });
  ASSERT_EQ(seen.size(), 1u) << "two samples of one stack";
  EXPECT_EQ(seen[0], (StackRef{0, 7, 0, 0, kNoWindow}));
}

TEST(InfoWriter, SaysWhatTheRecordingIsAndHolds) {
  const std::vector<Recording> r = load(write_small_recording(), {.include_idle = true});
  std::ostringstream out;
  write_info(out, describe_recording(r[0]), {{UnnamedReason::kBinaryNotFound, 2}});
  const std::string text = out.str();
  for (const char* line :
       {"format          1.5, written by ebprof 9.9.9\n", "command line    ebprof-record -a\n",
        "event           cpu-clock at 99 Hz on 4 CPUs", "duration        2.00 s\n",
        "samples         2\n", "processes       1 (1 maps captures, 1 mappings)\n",
        "lost            2 (buffer full: 2)\n", "lost where      cpu 1: 2; reported from ",
        "partial stacks  1 (user stack unreadable: 1)\n",
        "unnamed frames  binary not found in 2 samples (100.0%)\n",
        "embedded        1 binaries, 1 function symbols\n",
        "symbol coverage 1 of 1 sampled binaries with a build-id have embedded symbols",
        "\nheader                 1", "\nheader-copy            1", "\nsamples                1",
        "\nelf-symbols            1"})
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
        "sample time 1600000000 pid 7 tid 8 cpu 2 stack 0 comm 0", "losses at 2000000000",
        "cpu 1 lost 2 buffer full", "cpu 0 partial 1 user stack unreadable", "lost 2 buffer full",
        "partial 1 user stack unreadable", "# 7 frames, format 1.5"}) {
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

}  // namespace
}  // namespace ebprof::report
