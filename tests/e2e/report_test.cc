// End-to-end, the report: its outputs and options over real recordings, and
// the clients that read them (go tool pprof, a browser).
#include <gtest/gtest.h>

#include <sstream>
#include <utility>

#include "tests/browser.h"
#include "tests/e2e/e2e_support.h"

namespace ebprof::e2e {
namespace {

TEST(EndToEnd, InfoAndDumpDescribeARealRecording) {
  REQUIRE_BPF();
  std::string data = temp_file("info.data");
  Outcome rec = run(kRecord + " -F 499 -o " + data + " -- " + kHotcold + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  std::string samples = rec.err.substr(rec.err.find('(') + 1);
  samples = samples.substr(0, samples.find(' '));

  Outcome info = run(kReport + " info " + data);
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("samples         " + samples + "\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("lost            0\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("transport ringbuf"), std::string::npos) << info.out;

  Outcome dump = run(kReport + " dump -i " + data);
  ASSERT_EQ(dump.status, 0) << dump.err;
  EXPECT_NE(dump.out.find("libebprof_demo.so build-id "), std::string::npos);
  EXPECT_NE(dump.out.find("_ZN4demo8hot_leafEm"), std::string::npos);  // its embedded table
  EXPECT_NE(dump.out.find("  pid namespace "), std::string::npos) << dump.out;
  EXPECT_NE(dump.out.find(", root /\n"), std::string::npos) << dump.out;
}

TEST(EndToEnd, ACutRecordingStillReportsWhatItHolds) {
  REQUIRE_BPF();
  std::string data = temp_file("cut.data");
  ASSERT_EQ(run(kRecord + " -F 499 -o " + data + " -- " + kHotcold + " 1").status, 0);
  // Lose the last few bytes, as a recorder killed mid-write would.
  fs::resize_file(data, fs::file_size(data) - 5);
  Outcome top = run(kReport + " -i " + data);
  EXPECT_EQ(top.status, 0) << top.err;
  EXPECT_NE(top.err.find("warning:"), std::string::npos) << top.err;
  EXPECT_EQ(lines(top.err), 1) << top.err;
  EXPECT_NE(top.out.find(kLeafChain), std::string::npos) << top.out;
}

// Sample counts of a report's folded output, checked line by line the way
// flamegraph.pl reads it: frames, one space, a count.
uint64_t folded_total(const std::string& data, const std::string& flags) {
  Outcome folded = run(kReport + " -i " + data + " --format folded " + flags);
  EXPECT_EQ(folded.status, 0) << folded.err;
  uint64_t total = 0;
  std::istringstream in(folded.out);
  for (std::string line; std::getline(in, line);) {
    size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    EXPECT_GT(space, 0u) << line;
    std::string count = line.substr(space + 1);
    EXPECT_EQ(count.find_first_not_of("0123456789"), std::string::npos) << line;
    EXPECT_EQ(line.find(";;"), std::string::npos) << line;
    total += std::stoull(count);
  }
  return total;
}

// Filters split a recording exactly: complementary filters add up to the
// whole, and script prints one block per sample kept.
TEST(EndToEnd, ReportFiltersAndOutputsAddUp) {
  REQUIRE_BPF();
  std::string data = temp_file("filters.data");
  Outcome rec = run(kRecord + " -a -F 499 -o " + data + " -- " + kHotcold + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  const uint64_t all = folded_total(data, "--include-idle");
  const uint64_t busy = folded_total(data, "");
  ASSERT_GT(all, 300u);
  EXPECT_LE(busy, all);

  const uint64_t hotcold = folded_total(data, "--comm hotcold");
  EXPECT_GT(hotcold, 300u);
  EXPECT_EQ(folded_total(data, "--time ,0.5") + folded_total(data, "--time 0.5,"), busy);
  EXPECT_EQ(folded_total(data, "--cpu 0") + folded_total(data, "--cpu 1"), busy);
  EXPECT_EQ(folded_total(data, "--comm hotcold --symbol caller_a") +
                folded_total(data, "--comm hotcold --symbol caller_b"),
            folded_total(data, "--comm hotcold --symbol 'caller_[ab]'"));
  EXPECT_EQ(folded_total(data, "--comm hotcold --dso libebprof_demo.so"),
            folded_total(data, "--comm hotcold --symbol hot_leaf"));
  // --user-only drops only the samples taken with no user stack.
  EXPECT_LE(folded_total(data, "--user-only"), busy);

  // script: one block per sample, perf script's header line.
  Outcome script = run(kReport + " -i " + data + " --format script --comm hotcold");
  ASSERT_EQ(script.status, 0) << script.err;
  uint64_t blocks = 0;
  std::istringstream in(script.out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '\t')
      continue;
    ++blocks;
    EXPECT_NE(line.find(" cpu-clock:"), std::string::npos) << line;
    EXPECT_TRUE(line.starts_with("hotcold ")) << line;
  }
  EXPECT_EQ(blocks, hotcold);
  EXPECT_NE(script.out.find("\t"), std::string::npos);
  EXPECT_NE(script.out.find(" demo::hot_leaf(unsigned long)+0x"), std::string::npos);

  // -o writes the file; a closed pipe ends the report quietly.
  std::string out = temp_file("report.txt");
  Outcome to_file = run(kReport + " -i " + data + " -o " + out + " --format folded");
  EXPECT_EQ(to_file.status, 0) << to_file.err;
  EXPECT_TRUE(to_file.out.empty());
  EXPECT_NE(slurp(out).find("hot_leaf"), std::string::npos);
  Outcome piped = run(kReport + " -i " + data + " --format script | head -1");
  EXPECT_EQ(piped.status, 0);
  EXPECT_EQ(piped.err, "");
  // -o naming the recording itself would truncate it before it is read.
  Outcome self = run(kReport + " -i " + data + " -o " + data);
  EXPECT_EQ(self.status, 1);
  EXPECT_NE(self.err.find("is the recording being read"), std::string::npos) << self.err;
  EXPECT_GT(fs::file_size(data), 1000u);
  Outcome bad = run(kReport + " -i " + data + " -o /nonexistent/dir/report.txt");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("cannot write /nonexistent/dir/report.txt"), std::string::npos);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
}

// go tool pprof, the real client, reads the pprof output and agrees with
// the top table: the same hot function with the same share, the callers,
// and the labels.
TEST(EndToEnd, PprofIsReadByGoToolPprofAndAgreesWithTop) {
  REQUIRE_BPF();
  if (run("go version").status != 0)
    GTEST_SKIP()
        << "go is not installed (apt-get install golang-go): no pprof client to check with";
  std::string data = temp_file("pprof.data"), pb = temp_file("pprof.pb.gz");
  Outcome rec = run(kRecord + " -F 499 -o " + data + " -- " + kHotcold + " 1.5");
  ASSERT_EQ(rec.status, 0) << rec.err;
  Outcome write = run(kReport + " -i " + data + " --format pprof -o " + pb);
  ASSERT_EQ(write.status, 0) << write.err;

  // Our self share of hot_leaf, from the top table.
  double ours = -1;
  Outcome top = run(kReport + " -i " + data + " -n 0");
  std::istringstream rows(top.out);
  for (std::string line; std::getline(rows, line);)
    if (line.find("[.] " + kLeafChain) != std::string::npos)
      ours = std::stod(line.substr(line.find('%') + 1));
  ASSERT_GT(ours, 50) << top.out;

  Outcome flat = run("go tool pprof -top -nodecount=1000 " + pb);
  ASSERT_EQ(flat.status, 0) << flat.err;
  EXPECT_NE(flat.out.find("File: hotcold"), std::string::npos) << flat.out;
  EXPECT_NE(flat.out.find("Type: cpu"), std::string::npos) << flat.out;
  double theirs = -1;
  std::istringstream lines_in(flat.out);
  for (std::string line; std::getline(lines_in, line);)
    if (line.ends_with(" " + kLeafChain)) {
      std::istringstream fields(line);
      std::string flat_value, flat_pct;
      fields >> flat_value >> flat_pct;
      theirs = std::stod(flat_pct);
    }
  EXPECT_NEAR(theirs, ours, 0.1) << flat.out;

  Outcome traces = run("go tool pprof -traces " + pb);
  ASSERT_EQ(traces.status, 0) << traces.err;
  for (const char* piece : {"comm:  hotcold", "pid:  ", "tid:  ", "cpu:  ", "demo::caller_a()",
                            "demo::caller_b()", "main"})
    EXPECT_NE(traces.out.find(piece), std::string::npos) << piece << "\n" << traces.out;
}

// --version: the release and the commit built, one line, for bug reports.
TEST(EndToEnd, BothToolsSayTheirVersionAndCommit) {
  for (const auto& [tool, name] :
       {std::pair{kRecord, "ebprof-record"}, {kReport, "ebprof-report"}}) {
    Outcome v = run(tool + " --version");
    EXPECT_EQ(v.status, 0) << v.err;
    EXPECT_TRUE(v.out.starts_with(std::string(name) + " " + EBPROF_VERSION + " (commit ")) << v.out;
    EXPECT_EQ(lines(v.out), 1) << v.out;
  }
}

// The Children share of `function`'s row: samples with it anywhere.
double children_share(const std::string& top, const std::string& function) {
  std::istringstream rows(top);
  for (std::string line; std::getline(rows, line);)
    if (line.find("] " + function) != std::string::npos)
      return std::stod(line);
  return -1;
}

// diff of a recording against itself changes nothing; merge of two is what
// reading both with two -i gives, sample for sample.
TEST(EndToEnd, DiffAgainstItselfIsZeroAndMergeEqualsTwoInputs) {
  REQUIRE_BPF();
  std::string a = temp_file("diff-a.data"), b = temp_file("diff-b.data"),
              merged = temp_file("diff-merged.data");
  for (const std::string& data : {a, b}) {
    Outcome rec = run(kRecord + " -F 499 -o " + data + " -- " + kHotcold + " 1");
    ASSERT_EQ(rec.status, 0) << rec.err;
  }
  Outcome self = run(kReport + " diff " + a + " " + a + " -n 0");
  ASSERT_EQ(self.status, 0) << self.err;
  EXPECT_NE(self.out.find(kLeafChain), std::string::npos) << self.out;
  std::istringstream rows(self.out);
  for (std::string line; std::getline(rows, line);) {
    if (!line.starts_with("#")) {
      EXPECT_NE(line.find(" +0.00 "), std::string::npos) << line;
    }
  }
  Outcome folded = run(kReport + " diff " + a + " " + a + " --format folded");
  ASSERT_EQ(folded.status, 0) << folded.err;
  std::istringstream folded_lines(folded.out);
  for (std::string line; std::getline(folded_lines, line);) {
    // Names may hold spaces: the two counts are the last two fields.
    const size_t last = line.rfind(' '), before = line.rfind(' ', last - 1);
    EXPECT_EQ(line.substr(before + 1, last - before - 1), line.substr(last + 1)) << line;
  }

  Outcome merge = run(kReport + " merge -o " + merged + " " + a + " " + b);
  ASSERT_EQ(merge.status, 0) << merge.err;
  Outcome one = run(kReport + " -i " + merged + " -n 0");
  Outcome two = run(kReport + " -i " + a + " -i " + b + " -n 0");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.out, two.out);
  auto samples = [&](const std::string& data) {
    return std::stoull(run(kReport + " -i " + data + " -n 1").out.substr(2));
  };
  EXPECT_EQ(samples(merged), samples(a) + samples(b));
  EXPECT_GT(samples(a), 300u);
  Outcome info = run(kReport + " info " + merged);
  EXPECT_NE(info.out.find("source          1: " + b), std::string::npos) << info.out;
  Outcome clobber = run(kReport + " merge -o " + a + " " + a + " " + b);
  EXPECT_NE(clobber.status, 0);
  EXPECT_NE(clobber.err.find("is one of the recordings being merged"), std::string::npos)
      << clobber.err;
}

// A merged file's sources are named in warnings by the inputs they came
// from: both were called by the merged file's name.
TEST(EndToEnd, WarningsNameEachSourceOfAMergedFile) {
  const std::string data = std::string(EBPROF_TEST_DATA_DIR) + "/";
  const std::string merged = temp_file("rates-merged.data");
  Outcome merge = run(kReport + " merge -o " + merged + " " + data + "v1.0-hotcold.data " + data +
                      "v1.2-hotcold.data");
  ASSERT_EQ(merge.status, 0) << merge.err;
  Outcome report = run(kReport + " -i " + merged + " -n 1 --symfs /nonexistent");
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(
      report.err.find(merged + " > " + data + "v1.2-hotcold.data samples cpu-clock at 499 Hz, " +
                      merged + " > " + data + "v1.0-hotcold.data cpu-clock at 199 Hz"),
      std::string::npos)
      << report.err;
}

// The flame graph page in a real browser (Debian's chromium, headless): it
// runs without console errors, shows the root and the hot leaf, and its
// search reports the hot function's share, which is top's.
TEST(EndToEnd, FlameGraphPageWorksInAHeadlessBrowser) {
  REQUIRE_BPF();
  if (run("command -v chromium").status != 0)
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium): no browser to load "
                    "the page in";
  std::string data = temp_file("flame.data"), page = temp_file("flame.html"),
              diff = temp_file("flame-diff.html");
  Outcome rec = run(kRecord + " -F 499 -o " + data + " -- " + kHotcold + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  ASSERT_EQ(run(kReport + " -i " + data + " --format flamegraph -o " + page).status, 0);
  ASSERT_EQ(run(kReport + " diff " + data + " " + data + " --format flamegraph -o " + diff).status,
            0);
  const double share = children_share(run(kReport + " -i " + data + " -n 0").out, kLeafChain);
  ASSERT_GT(share, 50);

  fs::create_directories(EBPROF_ARTIFACTS);
  const std::string browser = headless_chromium();
  for (const std::string& file : {page, diff}) {
    const std::string url = "'file://" + file + "#search=hot_leaf'";
    Outcome dom = run(browser + "--dump-dom " + url);
    ASSERT_EQ(dom.status, 0) << dom.err;
    EXPECT_EQ(dom.err.find(":CONSOLE"), std::string::npos) << dom.err;
    EXPECT_NE(dom.out.find(">all</div>"), std::string::npos) << dom.out.substr(0, 4000);
    EXPECT_NE(dom.out.find(">" + kLeafChain + "</div>"), std::string::npos);
    const size_t matched = dom.out.find("id=\"matched\">Matched: ");
    ASSERT_NE(matched, std::string::npos);
    // The search sums the hot leaf's frames, wherever they are on a stack
    // (under an interrupt's kernel frames too): its Children share.
    if (file == page) {
      EXPECT_NEAR(std::stod(dom.out.substr(matched + 22)), share, 0.5)
          << dom.out.substr(matched, 80);
    }
    const std::string shot =
        std::string(EBPROF_ARTIFACTS) + "/" + fs::path(file).stem().string() + ".png";
    Outcome screenshot = run(browser + "--screenshot=" + shot + " " + url);
    EXPECT_EQ(screenshot.status, 0) << screenshot.err;
    EXPECT_GT(fs::file_size(shot), 5000u);
  }

  // A graph taller than the window (127 frames of recursion, some 1,900
  // pixels) opens showing its root, and is titled for what it shows.
  const std::string tall_data = temp_file("flame-tall.data"), tall = temp_file("flame-tall.html");
  ASSERT_EQ(run(kRecord + " -F 499 -o " + tall_data + " -- " + kWithfp + " --deep 0.5").status, 0);
  ASSERT_EQ(run(kReport + " -i " + tall_data + " --format flamegraph -o " + tall).status, 0);
  Outcome dom = run(browser + "--dump-dom 'file://" + tall + "'");
  ASSERT_EQ(dom.status, 0) << dom.err;
  auto attribute = [&](const std::string& name) {
    const size_t at = dom.out.find(name + "=\"");
    return at == std::string::npos ? -1 : std::stol(dom.out.substr(at + name.size() + 2));
  };
  const long bottom = attribute("data-root-bottom"), view = attribute("data-view-height");
  ASSERT_GT(view, 0) << dom.out.substr(0, 2000);
  EXPECT_GT(bottom, 0);
  EXPECT_LE(bottom, view) << "the root is below the fold";
  EXPECT_NE(dom.out.find("Flame graph: cpu-clock on "), std::string::npos);
  EXPECT_NE(dom.out.find(" samples over "), std::string::npos);
  // What the first paint shows, at the window's size: the bar, the root and
  // the frames above it (a page scrolled to its root screenshotted blank,
  // 3.5 KB of white).
  const std::string shot = std::string(EBPROF_ARTIFACTS) + "/flame-tall.png";
  ASSERT_EQ(run(browser + "--screenshot=" + shot + " 'file://" + tall + "'").status, 0);
  EXPECT_GT(fs::file_size(shot), 20000u) << "a blank first paint: " << shot;
}

}  // namespace
}  // namespace ebprof::e2e
