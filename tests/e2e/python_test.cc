// CPython processes recorded as they run: their Python functions, lines
// and threads in every stack, mixed with the C code they call, in the
// default frame-pointer mode and with --call-graph dwarf, for both
// interpreters found on Debian 12 machines (Debian's python3.11, libpython
// linked in; a shared-libpython build first on PATH where there is one).

#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>

#include "tests/e2e/e2e_support.h"

namespace ebprof::e2e {
namespace {

const std::string kPysplit = EBPROF_PYSPLIT;

struct PythonCase {
  std::string interpreter;
  std::string call_graph;  // "" or "--call-graph dwarf"
};

void PrintTo(const PythonCase& c, std::ostream* os) {
  *os << c.interpreter << (c.call_graph.empty() ? "" : " " + c.call_graph);
}

// Samples of the folded lines that hold `needle` (and `also`).
uint64_t samples_with(const std::string& folded, const std::string& needle,
                      const std::string& also = "") {
  uint64_t n = 0;
  std::istringstream in(folded);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos && line.find(also) != std::string::npos)
      n += std::stoull(line.substr(line.rfind(' ') + 1));
  return n;
}

class PythonFrames : public testing::TestWithParam<PythonCase> {};

TEST_P(PythonFrames, FunctionsSharesThreadsAndTheCTheyCall) {
  REQUIRE_BPF();
  const PythonCase& c = GetParam();
  if (run("command -v " + c.interpreter).status != 0)
    GTEST_SKIP() << c.interpreter << " is not installed";
  const std::string data = temp_file("pysplit.data");
  Outcome rec = run(kRecord + " -q -F 999 " + c.call_graph + " -o " + data + " -- " +
                    c.interpreter + " " + kPysplit + " 3");
  ASSERT_EQ(rec.status, 0) << rec.err;
  // The workload's own CPU per function: the truth.
  std::map<std::string, double> truth;
  std::istringstream said(rec.out);
  for (std::string name; said >> name;)
    said >> truth[name];
  ASSERT_GT(truth["hot"], 0) << rec.out;

  const std::string folded = run(kReport + " -i " + data + " --format folded").out;
  // Callers in order, from the module down; the C a function calls under it.
  const uint64_t hot = samples_with(folded, ";<module>;main;middle;hot;burn");
  const uint64_t cold = samples_with(folded, ";<module>;main;middle;cold;burn");
  ASSERT_GT(hot + cold, 100u) << folded;
  const double want = 100 * truth["hot"] / (truth["hot"] + truth["cold"]);
  EXPECT_NEAR(100.0 * hot / (hot + cold), want, 3.0) << folded;
  // The second thread, with its own stack (with DWARF, the C call that
  // Thread.run makes into spinner stands between them).
  const uint64_t spinner = samples_with(folded, ";spinner;burn");
  EXPECT_GT(spinner, 100u) << folded;
  EXPECT_EQ(samples_with(folded, ";spinner;burn", "Thread.run;"), spinner) << folded;
  EXPECT_GT(samples_with(folded, ";main;hashed;"), 0u) << "C called from Python\n" << folded;
  // Every eval loop replaced by what it ran, but for the samples taken
  // before the recorder found the interpreter (its first milliseconds)
  // and, with DWARF, some in system calls whose Python walk came back
  // empty (not yet understood: under 10%).
  const uint64_t all = samples_with(folded, " ");
  EXPECT_LT(samples_with(folded, "_PyEval_EvalFrameDefault;"),
            all / (c.call_graph.empty() ? 50 : 10))
      << folded;
  // The busy loop's own lines: the loop's test (line 15) and body (16).
  const std::string lines = run(kReport + " -i " + data + " --format folded --lines").out;
  const uint64_t burn = samples_with(lines, ";burn pysplit.py:");
  EXPECT_GT(burn, hot + cold) << lines;
  EXPECT_GE(samples_with(lines, ";burn pysplit.py:15") + samples_with(lines, ";burn pysplit.py:16"),
            burn * 99 / 100)
      << lines;
}

INSTANTIATE_TEST_SUITE_P(Interpreters, PythonFrames,
                         testing::Values(PythonCase{"/usr/bin/python3.11", ""},
                                         PythonCase{"/usr/bin/python3.11", "--call-graph dwarf"},
                                         PythonCase{"python3", ""},
                                         PythonCase{"python3", "--call-graph dwarf"}));

// --no-python records what it did before: native frames only.
TEST(Python, NoPythonRecordsNativeFramesOnly) {
  REQUIRE_BPF();
  if (run("command -v /usr/bin/python3.11").status != 0)
    GTEST_SKIP() << "/usr/bin/python3.11 is not installed";
  const std::string data = temp_file("nopython.data");
  Outcome rec = run(kRecord + " -q -F 999 --no-python -o " + data + " -- /usr/bin/python3.11 " +
                    kPysplit + " 1");
  ASSERT_EQ(rec.status, 0) << rec.err;
  const std::string folded = run(kReport + " -i " + data + " --format folded").out;
  EXPECT_EQ(samples_with(folded, ";burn"), 0u) << folded;
  EXPECT_GT(samples_with(folded, "_PyEval_EvalFrameDefault"), 0u) << folded;
}

}  // namespace
}  // namespace ebprof::e2e
