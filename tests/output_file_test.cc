// Outputs are never written through a link, nor into a device or FIFO.
#include "common/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/error.h"

namespace ebprof {
namespace {

namespace fs = std::filesystem;

// A fresh directory for one test.
fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::path(testing::TempDir()) / ("output_file_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The message an Error thrown by `f` carries, "" when none is thrown.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(OutputFile, OnlyAbsentOrRegularPathsAreOutputs) {
  const fs::path dir = fresh_dir("check");
  EXPECT_EQ(error_of([&] { check_output((dir / "new").string(), "-o"); }), "");
  std::ofstream(dir / "regular") << "x";
  EXPECT_EQ(error_of([&] { check_output((dir / "regular").string(), "-o"); }), "");
  fs::create_symlink(dir / "nowhere", dir / "dangling");
  fs::create_symlink(dir / "regular", dir / "link");
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  for (const auto& [path, kind] : std::vector<std::pair<std::string, std::string>>{
           {(dir / "dangling").string(), "symbolic link"},
           {(dir / "link").string(), "symbolic link"},
           {(dir / "fifo").string(), "FIFO"},
           {dir.string(), "directory"},
           {"/dev/null", "device"}}) {
    const std::string& where = path;  // a structured binding no lambda may capture (C++20)
    const std::string e = error_of([&] { check_output(where, "-o"); });
    EXPECT_NE(e.find(kind), std::string::npos) << path << ": " << e;
    EXPECT_NE(e.find("-o"), std::string::npos) << e;
  }
  EXPECT_FALSE(fs::exists(dir / "nowhere"));
}

TEST(OutputFile, CreateNewRefusesAnyExistingName) {
  const fs::path dir = fresh_dir("create");
  fs::create_symlink(dir / "target", dir / "dangling");
  const std::string e = error_of([&] { create_new((dir / "dangling").string(), "-o"); });
  EXPECT_NE(e, "");
  EXPECT_FALSE(fs::exists(dir / "target")) << "created through the link";
  UniqueFd fd = create_new((dir / "new").string(), "-o");
  ASSERT_TRUE(fd);
  struct stat st {};
  ASSERT_EQ(fstat(fd.get(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(OutputFile, AReplacingFileReplacesTheNameNotWhatItPointsAt) {
  const fs::path dir = fresh_dir("replace");
  std::ofstream(dir / "precious") << "precious";
  std::ofstream(dir / "out") << "old";
  {
    ReplacingFile file((dir / "out").string(), "-o");
    UniqueFd fd = file.take_fd();
    ASSERT_EQ(write(fd.get(), "new", 3), 3);
    EXPECT_EQ(slurp(dir / "out"), "old") << "replaced before commit";
    file.commit();
  }
  EXPECT_EQ(slurp(dir / "out"), "new");
  // Uncommitted: nothing changes, nothing is left behind.
  { ReplacingFile abandoned((dir / "out").string(), "-o"); }
  EXPECT_EQ(slurp(dir / "out"), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 2);
  // A link at the name is refused, and its target left alone.
  fs::create_symlink(dir / "precious", dir / "link");
  EXPECT_NE(error_of([&] { ReplacingFile((dir / "link").string(), "-o"); }).find("symbolic link"),
            std::string::npos);
  EXPECT_EQ(slurp(dir / "precious"), "precious");
}

}  // namespace
}  // namespace ebprof
