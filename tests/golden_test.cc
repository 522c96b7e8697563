// Golden files: the exact text ebprof-report prints for the recordings in
// tests/data, one case per line of tests/golden/cases.txt. A mismatch
// prints a unified diff. EBPROF_UPDATE_GOLDEN=1 rewrites the files instead
// (docs/hacking.md), for a change of output that is intended.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kGolden = EBPROF_GOLDEN_DIR;
const fs::path kData = EBPROF_TEST_DATA_DIR;
const std::string kReport = EBPROF_REPORT_BIN;

struct Case {
  std::string name;
  std::string args;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  std::ifstream in(kGolden / "cases.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    Case c;
    fields >> c.name;
    std::getline(fields >> std::ws, c.args);
    out.push_back(std::move(c));
  }
  return out;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// How gtest, and so ctest's test names, show a case: its command, not its
// bytes (which held heap addresses, a new name at every discovery).
void PrintTo(const Case& c, std::ostream* os) {
  *os << "ebprof-report " << c.args;
}

class Golden : public testing::TestWithParam<Case> {};

TEST_P(Golden, OutputIsExactlyTheGoldenFile) {
  const Case& c = GetParam();
  const fs::path actual = fs::path(testing::TempDir()) / (c.name + ".out");
  const fs::path err = fs::path(testing::TempDir()) / (c.name + ".err");
  // Names from the recordings alone: no binary or debuginfo of this machine
  // may change them.
  const std::string command = "cd '" + kData.string() + "' && '" + kReport + "' " + c.args +
                              " --symfs /nonexistent-symfs >'" + actual.string() + "' 2>'" +
                              err.string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << slurp(err);
  const fs::path expected = kGolden / (c.name + ".out");
  if (std::getenv("EBPROF_UPDATE_GOLDEN")) {
    fs::copy_file(actual, expected, fs::copy_options::overwrite_existing);
    return;
  }
  ASSERT_TRUE(fs::exists(expected)) << expected << " is missing: regenerate (docs/hacking.md)";
  if (slurp(actual) != slurp(expected)) {
    const std::string diff = "diff -u '" + expected.string() + "' '" + actual.string() + "'";
    std::system(diff.c_str());
    ADD_FAILURE() << c.name << ": output differs from " << expected << " (diff above)";
  }
}

INSTANTIATE_TEST_SUITE_P(Report, Golden, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& param) {
                           std::string name = param.param.name;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           return name;
                         });

// Every golden file belongs to a case: a renamed case must not leave its
// old file passing for nothing.
TEST(GoldenFiles, EachFileHasItsCase) {
  std::vector<std::string> names;
  for (const Case& c : cases())
    names.push_back(c.name + ".out");
  for (const auto& entry : fs::directory_iterator(kGolden)) {
    if (entry.path().extension() != ".out")
      continue;
    EXPECT_NE(std::find(names.begin(), names.end(), entry.path().filename().string()), names.end())
        << entry.path() << " has no case in cases.txt";
  }
}

}  // namespace
