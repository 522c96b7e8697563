// Paths a process names are resolved inside its root, by the kernel's
// openat2 and by the resolver for kernels without it alike.
#include "record/in_root.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <ostream>

namespace ebprof::record {

// How gtest, and so ctest's test names, show a resolver: by name, not its
// byte. Beside RootResolver, not in the anonymous namespace, for gtest to
// find it.
static void PrintTo(RootResolver resolver, std::ostream* os) {
  *os << (resolver == RootResolver::kKernel ? "RootResolver::kKernel" : "RootResolver::kOwn");
}

namespace {

namespace fs = std::filesystem;

std::string read_all(const UniqueFd& fd) {
  std::string out(256, '\0');
  const ssize_t n = pread(fd.get(), out.data(), out.size(), 0);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

// A container's root whose links point at absolute paths: followed from
// the host's root, they name the host's files; inside its root, its own.
class InRoot : public testing::TestWithParam<RootResolver> {
 protected:
  void SetUp() override {
    base_ = fs::path(testing::TempDir()) / ("in_root_" + std::to_string(getpid()));
    fs::remove_all(base_);
    host_ = base_ / "host";
    root_ = base_ / "root";
    fs::create_directories(host_);
    std::ofstream(host_ / "secret") << "the host's";
    // The same absolute path inside the root holds the container's file.
    const fs::path inside = root_ / host_.relative_path();
    fs::create_directories(inside);
    std::ofstream(inside / "secret") << "the container's";
    fs::create_directories(root_ / "etc");
    std::ofstream(root_ / "etc" / "map") << "a map";
    fs::create_symlink(host_, root_ / "data");                 // absolute
    fs::create_symlink("../etc/map", root_ / "etc" / "link");  // relative
    fs::create_symlink("loop", root_ / "loop");
    fd_ = UniqueFd(::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(fd_);
  }
  void TearDown() override { fs::remove_all(base_); }

  UniqueFd open(const std::string& path, int flags = O_RDONLY) {
    return open_in_root(fd_.get(), path, flags, GetParam());
  }

  fs::path base_, host_, root_;
  UniqueFd fd_;
};

TEST_P(InRoot, AbsoluteLinksStayInsideTheRoot) {
  // What /proc/PID/root/data/secret gave: the host's file.
  EXPECT_EQ(read_all(UniqueFd(::open((root_ / "data" / "secret").c_str(), O_RDONLY))),
            "the host's");
  EXPECT_EQ(read_all(open("/data/secret")), "the container's");
}

TEST_P(InRoot, DotDotStopsAtTheRoot) {
  EXPECT_EQ(read_all(open("/../../../../etc/map")), "a map");
  EXPECT_EQ(read_all(open("/etc/../etc/./map")), "a map");
  EXPECT_EQ(read_all(open("/etc/link")), "a map");
}

TEST_P(InRoot, RefusesWhatItShould) {
  EXPECT_FALSE(open("/etc/link", O_RDONLY | O_NOFOLLOW)) << "a link as the last component";
  EXPECT_FALSE(open("/loop")) << "a link loop";
  EXPECT_FALSE(open("/etc/map/below")) << "a file as a directory";
  EXPECT_FALSE(open("/missing"));
}

INSTANTIATE_TEST_SUITE_P(Resolvers, InRoot,
                         testing::Values(RootResolver::kKernel, RootResolver::kOwn),
                         [](const testing::TestParamInfo<RootResolver>& p) {
                           return p.param == RootResolver::kKernel ? "Openat2" : "OwnResolver";
                         });

}  // namespace
}  // namespace ebprof::record
