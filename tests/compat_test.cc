// Recordings written by released versions (tests/data/) must keep reading,
// and real recordings must survive cuts and damage.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

#include "common/error.h"
#include "format/reader.h"
#include "report/aggregate/aggregate.h"
#include "report/load/load.h"
#include "report/load/recording.h"
#include "report/write/folded_writer.h"
#include "resolver_fixture.h"

namespace ebprof {
namespace {

namespace fs = std::filesystem;

const fs::path kData = EBPROF_TEST_DATA_DIR;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string folded(const fs::path& path) {
  report::NameTable names;
  std::vector<report::Recording> recordings;
  report::load_recordings(path.string(), {.include_idle = true}, names, recordings);
  // Names from the recording alone: no binary or debuginfo of this machine
  // (an empty --symfs) may change them.
  report::SymbolizeOptions embedded_only;
  embedded_only.sources.symfs = "/nonexistent-symfs";
  report::fakes::TestResolver stages(embedded_only);
  std::ostringstream out;
  report::write_folded(out, report::aggregate(recordings, names, stages.resolver, {}));
  return out.str();
}

// Each tests/data/vX.Y-NAME.data has the folded output it must produce, from
// its own embedded symbols and kallsyms, on any machine.
TEST(Compatibility, EveryReleasedRecordingStillReadsTheSame) {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(kData)) {
    if (entry.path().extension() != ".data")
      continue;
    fs::path golden = entry.path();
    golden.replace_extension(".folded");
    ASSERT_TRUE(fs::exists(golden)) << golden;
    EXPECT_EQ(folded(entry.path()), slurp(golden)) << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 1);
}

struct Frames : format::RecordingVisitor {
  std::vector<uint64_t> ends;  // where each frame ends
  void on_frame(const format::FrameInfo& f) override {
    ends.push_back(f.offset + 16 + f.stored_size);
  }
};

fs::path scratch(const std::string& name, const std::string& bytes) {
  fs::path path = fs::path(testing::TempDir()) / ("compat-" + name);  // format_tests has its own
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A recording cut anywhere reads exactly the whole frames before the cut.
TEST(RealRecording, ACutKeepsExactlyTheWholeFramesBeforeIt) {
  const std::string bytes = slurp(kData / "v1.0-hotcold.data");
  Frames all;
  format::read_recording((kData / "v1.0-hotcold.data").string(), all);
  for (size_t cut = all.ends.front(); cut < bytes.size(); cut += 97) {
    Frames got;
    format::ReadResult r =
        format::read_recording(scratch("cut.data", bytes.substr(0, cut)).string(), got);
    size_t whole = std::upper_bound(all.ends.begin(), all.ends.end(), cut) - all.ends.begin();
    EXPECT_EQ(r.frames, whole) << "cut at " << cut;
    EXPECT_EQ(r.complete, std::binary_search(all.ends.begin(), all.ends.end(), cut));
  }
}

// Random damage never crashes the reader or the report, and costs at most
// the frame it hits.
TEST(RealRecording, RandomDamageCostsOneFrameAndNeverCrashes) {
  const std::string bytes = slurp(kData / "v1.0-hotcold.data");
  Frames all;
  format::read_recording((kData / "v1.0-hotcold.data").string(), all);
  std::mt19937 rng(20261130);
  for (int round = 0; round < 300; ++round) {
    std::string bad = bytes;
    size_t at = all.ends.front() + rng() % (bad.size() - all.ends.front());
    bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    fs::path path = scratch("flip.data", bad);
    Frames got;
    format::ReadResult r = format::read_recording(path.string(), got);
    EXPECT_EQ(r.frames, all.ends.size() - 1) << "byte " << at << ": " << r.warning;
    EXPECT_FALSE(r.complete);
    EXPECT_NO_THROW(folded(path)) << "byte " << at;
  }
}

}  // namespace
}  // namespace ebprof
