// End-to-end, --call-graph dwarf: whole stacks through code without frame
// pointers, and the caller of a frameless libc leaf named (the leaf repair).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "tests/e2e/e2e_support.h"

namespace ebprof::e2e {
namespace {

const std::string kNofp = EBPROF_NOFP_BIN;
const std::string kNofpLib = EBPROF_NOFP_LIB;
const std::string kLibcleaf = EBPROF_LIBCLEAF_BIN;
const std::string kLoopCfi = EBPROF_LOOPCFI_BIN;

// --call-graph dwarf. The samples of folded output whose stack holds
// `path` (frames root first, ';'-joined), and all of `comm`'s samples.
struct PathCount {
  uint64_t with = 0, total = 0;
  double share() const { return total ? 100.0 * with / total : 0; }
};

PathCount count_path(const std::string& folded, const std::string& comm, const std::string& path) {
  PathCount c;
  std::istringstream in(folded);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(comm + ";"))
      continue;
    const uint64_t n = std::stoull(line.substr(line.rfind(' ') + 1));
    c.total += n;
    if (line.find(path) != std::string::npos)
      c.with += n;
  }
  return c;
}

std::string repeat(const std::string& frame, int times) {
  std::string out;
  for (int i = 0; i < times; ++i)
    out += frame + ";";
  return out;
}

// nofp's full call path under `caller`: main down to the leaf in the library.
std::string nofp_path(const std::string& caller) {
  return "main;(anonymous namespace)::" + caller + "();" +
         repeat("(anonymous namespace)::recurse(int, unsigned long)", 13) +
         repeat("nofp_chain", 9) + "nofp_spin ";
}

// A program and a library built without frame pointers: the frame-pointer
// walk gets nowhere, DWARF unwinding gets the whole path in (nearly) every
// sample, with the callers' true shares.
TEST(Dwarf, FullStacksThroughCodeWithoutFramePointers) {
  REQUIRE_BPF();
  const std::string fp = temp_file("nofp-fp.data"), dwarf = temp_file("nofp-dwarf.data");
  ASSERT_EQ(run(kRecord + " -F 999 -o " + fp + " -- " + kNofp + " 2").status, 0);
  Outcome rec = run(kRecord + " -F 999 --call-graph dwarf -o " + dwarf + " -- " + kNofp + " 2");
  ASSERT_EQ(rec.status, 0) << rec.err;
  const std::string folded = run(kReport + " -i " + dwarf + " --format folded").out;
  const PathCount a = count_path(folded, "nofp", nofp_path("work_a"));
  const PathCount b = count_path(folded, "nofp", nofp_path("work_b"));
  ASSERT_GT(a.total, 1500u) << folded;
  EXPECT_GE(a.with + b.with, 0.99 * a.total) << folded;
  EXPECT_NEAR(a.share(), 70, 5) << folded;
  // The problem it solves: frame pointers find no whole path at all.
  const std::string fp_folded = run(kReport + " -i " + fp + " --format folded").out;
  EXPECT_LT(count_path(fp_folded, "nofp", "main;(anonymous namespace)::work_").share(), 5)
      << fp_folded;
  Outcome info = run(kReport + " info " + dwarf);
  EXPECT_NE(info.out.find("call graph      dwarf, windows of up to 8192 bytes"), std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("elf-cfi"), std::string::npos) << info.out;
}

// Another machine, or the binaries gone: the embedded call frame
// information and symbols unwind and name the stacks the same.
TEST(Dwarf, StacksUnwindTheSameWithTheBinariesDeleted) {
  REQUIRE_BPF();
  const fs::path dir = fs::path(testing::TempDir()) / "dwarf-deleted";
  fs::create_directories(dir);
  fs::copy_file(kNofp, dir / "nofp", fs::copy_options::overwrite_existing);
  fs::copy_file(kNofpLib, dir / fs::path(kNofpLib).filename(),
                fs::copy_options::overwrite_existing);
  const std::string data = temp_file("dwarf-deleted.data");
  Outcome rec =
      run("LD_LIBRARY_PATH=" + dir.string() + " " + kRecord + " -F 499 --call-graph dwarf -o " +
          data + " -- " + (dir / "nofp").string() + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  // Without the embedded tables, the same once the binaries are gone
  // says why it cannot unwind, never a made-up frame.
  const std::string bare = temp_file("dwarf-deleted-bare.data");
  ASSERT_EQ(run("LD_LIBRARY_PATH=" + dir.string() + " " + kRecord +
                " -F 499 --call-graph dwarf --no-embed-symbols -o " + bare + " -- " +
                (dir / "nofp").string() + " 1")
                .status,
            0);
  // Inlined frames need DWARF, which the recording does not carry (glibc's
  // atof, inlined into main, shows only while the binary is there): the
  // names compared are the symbols'.
  const std::string folded = " -i " + data + " --format folded --no-inline";
  const std::string before = run(kReport + folded).out;
  fs::remove_all(dir);
  // An address no symbol covers (the PLT, start-up code) is unnamed either
  // way; only the table its reason names differs.
  const std::string after = std::regex_replace(
      run(kReport + folded).out, std::regex(", no symbol in the embedded table\\)"), ")");
  EXPECT_EQ(after, before);
  EXPECT_GE(count_path(after, "nofp", "::recurse(int, unsigned long);").share(), 99) << after;
  EXPECT_EQ(run(kReport + " info " + bare).out.find("elf-cfi"), std::string::npos);
  const std::string gone = run(kReport + " -i " + bare + " --format folded").out;
  EXPECT_EQ(count_path(gone, "nofp", "recurse").with, 0u) << gone;
  EXPECT_GE(count_path(gone, "nofp", "nofp;[truncated: no CFI for an address];").share(), 95)
      << gone;
}

// A stack deeper than the window: without frame pointers it ends in a
// root that says the window was too small; with them the walk continues on
// the recorded frame-pointer chain, as far as it goes (to main: libc's
// start-up frames have none). Never a frame of anything else.
TEST(Dwarf, AStackDeeperThanTheWindowSaysSoOrJoinsTheFramePointerChain) {
  REQUIRE_BPF();
  for (const std::string& binary : {kNofp, kWithfp}) {
    const std::string data = temp_file("dwarf-deep.data");
    Outcome rec =
        run(kRecord + " -F 499 --call-graph dwarf -o " + data + " -- " + binary + " --deep 1");
    ASSERT_EQ(rec.status, 0) << rec.err;
    const std::string comm = fs::path(binary).filename().string();
    const std::string folded = run(kReport + " -i " + data + " --format folded --user-only").out;
    const std::string descend = "(anonymous namespace)::descend(int)";
    const PathCount deep = count_path(folded, comm, descend + ";" + descend + ";" + descend + ";");
    ASSERT_GT(deep.total, 300u) << folded;
    EXPECT_GE(deep.share(), 95) << folded;
    const PathCount cut = count_path(
        folded, comm, comm + ";[truncated: stack window too small (--call-graph dwarf,8192)]");
    if (binary == kNofp)
      EXPECT_GE(cut.share(), 95) << folded;
    else
      EXPECT_LE(cut.with, 2u) << folded;
    std::istringstream lines(folded);
    for (std::string line; std::getline(lines, line);) {
      // With frame pointers, a window runs short only where they end too:
      // in libc's start-up frames, below main, when the window's end falls
      // there. Never above main.
      if (binary == kWithfp && line.find("window too small") != std::string::npos) {
        EXPECT_NE(line.find(";main;(anonymous namespace)::deep();"), std::string::npos) << line;
      }
      if (!line.starts_with(comm + ";") || line.find(descend) == std::string::npos)
        continue;
      std::istringstream frames(line.substr(0, line.rfind(' ')));
      for (std::string f; std::getline(frames, f, ';');)
        EXPECT_TRUE(f == comm || f == descend || f == "(anonymous namespace)::deep()" ||
                    f == "main" || f == "nofp_spin" || f.starts_with("[truncated: ") ||
                    f.starts_with("_"))
            << f << " in " << line;
    }
  }
}

// An independent check of the unwinder: on code built with frame pointers,
// the DWARF-unwound frames of every sample are the frame-pointer walk's,
// frame for frame, up to main (below, libc has no frame pointers).
TEST(Dwarf, AgreesFrameForFrameWithTheFramePointerWalk) {
  REQUIRE_BPF();
  const std::string data = temp_file("dwarf-agree.data");
  ASSERT_EQ(
      run(kRecord + " -F 499 --call-graph dwarf -o " + data + " -- " + kHotcold + " 1").status, 0);
  auto up_to_main = [](const std::string& script) {
    std::vector<std::string> samples;
    std::istringstream in(script);
    std::string current;
    bool cut = false;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) {
        samples.push_back(current);
        current.clear();
        cut = false;
      } else if (line[0] == '\t' && !cut) {
        current += line + "\n";
        cut = line.find(" main+") != std::string::npos;
      } else if (line[0] != '\t') {
        current = line + "\n";
      }
    }
    return samples;
  };
  const auto dwarf = up_to_main(run(kReport + " -i " + data + " --format script").out);
  const auto fp = up_to_main(run(kReport + " -i " + data + " --format script --unwind fp").out);
  ASSERT_EQ(dwarf.size(), fp.size());
  size_t agree = 0, through_main = 0;
  for (size_t i = 0; i < dwarf.size(); ++i) {
    if (fp[i].find(" main+") == std::string::npos)
      continue;  // an interrupt's kernel stack alone, or the loader
    ++through_main;
    agree += dwarf[i] == fp[i];
  }
  ASSERT_GT(through_main, 400u);
  EXPECT_GE(agree, 0.99 * through_main);
}

// Frame-pointer code spending its time in libc, which has no frame
// pointers: the leaf's caller, which a frame-pointer walk skips, is named in
// both modes, on CPU (memcpy, memset) and off (nanosleep, read); with
// frame pointers also through frameless libc calling itself (nanosleep
// calls clock_nanosleep).
TEST(Dwarf, TheCallerOfAFramelessLibcLeafIsNamed) {
  REQUIRE_BPF();
  for (const std::string mode : {"", "--call-graph dwarf "}) {
    const std::string data = temp_file("libcleaf.data");
    Outcome rec = run(kRecord + " --off-cpu " + mode + "-o " + data + " -- " + kLibcleaf + " 2");
    ASSERT_EQ(rec.status, 0) << rec.err;
    const std::string on_cpu = run(kReport + " -i " + data + " --format folded").out;
    const std::string off_cpu = run(kReport + " -i " + data + " --format folded --view offcpu").out;
    struct Caller {
      const std::string& folded;
      std::string comm, frame;
    };
    for (const Caller& c :
         {Caller{on_cpu, "copier", "copy_buffers()"}, Caller{on_cpu, "clearer", "clear_buffers()"},
          Caller{off_cpu, "napper", "nap()"}, Caller{off_cpu, "reader", "wait_pipe(int)"}}) {
      // Below the lambda that calls it, and just once: nothing made up.
      const std::string path = "operator();(anonymous namespace)::" + c.frame + ";";
      const PathCount n = count_path(c.folded, c.comm, path);
      ASSERT_GT(n.total, 0u) << mode << c.comm << "\n" << c.folded;
      EXPECT_GE(n.share(), 95) << mode << c.comm << "\n" << c.folded;
      EXPECT_EQ(count_path(c.folded, c.comm, c.frame + ";(anonymous").with, 0u) << c.folded;
    }
    // libc's read, named as perf names it, once: with libc6-dbg its DWARF
    // has the function inlined into itself (read;__GI___libc_read).
    EXPECT_GE(count_path(off_cpu, "reader", "wait_pipe(int);read;").share(), 95) << off_cpu;
    EXPECT_EQ(off_cpu.find("__GI_"), std::string::npos) << off_cpu;
  }
}

// The repair costs BPF a copy of the stack only where it can help: code
// that has set up its frame pointer (hotcold's, built with them) is sampled
// without one, libc's frameless memcpy and memset with one.
TEST(Dwarf, TheStackIsCopiedOnlyWhereTheLeafRepairNeedsIt) {
  REQUIRE_BPF();
  auto copied = [](const std::string& command) {
    Outcome rec = run(kRecord + " -v -F 999 -o " + temp_file("copies.data") + " -- " + command);
    std::smatch share;
    EXPECT_EQ(rec.status, 0) << rec.err;
    EXPECT_TRUE(std::regex_search(rec.err, share, std::regex(R"(user stack copied for (\d+)%)")))
        << rec.err;
    return share.empty() ? -1 : std::stoi(share[1]);
  };
  const int hotcold = copied(kHotcold + " 2");
  EXPECT_GE(hotcold, 0);
  EXPECT_LE(hotcold, 10);
  EXPECT_GE(copied(kLibcleaf + " 2"), 60);
}

// A binary whose CFI holds a DWARF expression that loops, in the caller of
// the leaf: every window through it is cut there, the reason counted, at
// no cost (a crafted recording was worth CPU-hours of a report; issue 27).
TEST(Dwarf, CfiWhoseExpressionLoopsIsCutNotEvaluated) {
  REQUIRE_BPF();
#if !defined(__x86_64__)
  GTEST_SKIP() << "the workload's CFI is x86-64's";
#endif
  const std::string data = temp_file("loopcfi.data");
  Outcome rec =
      run(kRecord + " -q --call-graph dwarf -F 199 -o " + data + " -- " + kLoopCfi + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  Outcome report = run(kReport + " -i " + data + " -n 3 --comm loopcfi");
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("# unnamed frames: CFI too costly to evaluate in "), std::string::npos)
      << report.out;
  const std::string folded = run(kReport + " -i " + data + " --format folded --comm loopcfi").out;
  // Cut in the caller, a step up from the leaf: where libdwfl would
  // evaluate the expression next.
  EXPECT_NE(folded.find("loopcfi;[truncated: CFI too costly to evaluate];spin"), std::string::npos)
      << folded;
  EXPECT_NE(folded.find(";loopcfi_leaf "), std::string::npos) << folded;
}

}  // namespace
}  // namespace ebprof::e2e
