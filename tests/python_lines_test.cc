// The decoder of CPython 3.11's location table against CPython itself:
// every instruction of every code object of the standard library
// (tests/python/line_oracle.py prints what co_positions() says).

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "report/symbolize/python_lines.h"

namespace ebprof::report {
namespace {

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

TEST(PythonLines, EveryInstructionOfTheStandardLibraryAsCPythonSaysIt) {
  const char* python = "/usr/bin/python3.11";
  if (access(python, X_OK) != 0)
    GTEST_SKIP() << python << " is not installed: no oracle";
  const std::string command = std::string(python) + " " + EBPROF_LINE_ORACLE;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  ASSERT_TRUE(pipe);
  size_t codes = 0, units = 0, wrong = 0;
  std::string line;
  for (int c; (c = std::fgetc(pipe.get())) != EOF;) {
    if (c != '\n') {
      line += static_cast<char>(c);
      continue;
    }
    std::istringstream in(line);
    uint32_t first = 0;
    std::string hex, runs;
    in >> first >> hex >> runs;
    const std::string table = unhex(hex);
    int32_t lasti = 0;
    std::istringstream run_list(runs);
    for (std::string run; std::getline(run_list, run, ',');) {
      const size_t colon = run.find(':');
      const int want = std::stoi(run.substr(0, colon));
      const int count = std::stoi(run.substr(colon + 1));
      for (int i = 0; i < count; ++i, ++lasti, ++units) {
        const int got = python_line(table, first, lasti);
        if (got != want && ++wrong <= 5)
          ADD_FAILURE() << "instruction " << lasti << " of a code object at line " << first
                        << ": line " << got << ", CPython says " << want;
      }
    }
    ++codes;
    line.clear();
  }
  EXPECT_GT(codes, 10000u) << "the standard library has more code objects";
  EXPECT_EQ(wrong, 0u) << "of " << units << " instructions in " << codes << " code objects";
}

TEST(PythonLines, BeforeTheFirstInstructionIsTheFirstLine) {
  EXPECT_EQ(python_line("", 42, -1), 42);
  EXPECT_EQ(python_line("", 42, 0), 0) << "past the table's end: no line";
  EXPECT_EQ(python_line("\x01", 42, 0), 0) << "a damaged table";
}

}  // namespace
}  // namespace ebprof::report
