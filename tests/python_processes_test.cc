// Finding CPython in a live process and checking its layout, against a
// real /usr/bin/python3.11 the test starts (no BPF: what would go into
// BPF's map is caught by the Publish callback).

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "record/elf_identities.h"
#include "record/proc_maps.h"
#include "record/python_processes.h"

namespace ebprof::record {
namespace {

constexpr const char* kPython = "/usr/bin/python3.11";

// A python3.11 asleep in its own code, killed at the end.
class SleepingPython : public testing::Test {
 protected:
  void SetUp() override {
    if (access(kPython, X_OK) != 0)
      GTEST_SKIP() << kPython << " is not installed";
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      execl(kPython, kPython, "-c", "import time\ntime.sleep(30)", nullptr);
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // initialized, asleep
    ElfIdentities identities;
    info_ = read_process(static_cast<uint32_t>(pid_), 1, identities);
    ASSERT_FALSE(info_.mappings.empty()) << info_.maps_error;
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // What inspect() says of the process with `layouts`, and what it would
  // have BPF walk.
  std::vector<uint32_t> inspect(std::span<const PythonLayout> layouts) {
    std::vector<uint32_t> published;
    PythonProcesses python(
        [&](uint32_t pid, const ebprof_python_proc* entry) {
          if (entry && entry->runtime && entry->code_type)
            published.push_back(pid);
        },
        layouts);
    python.inspect(info_);
    return published;
  }

  pid_t pid_ = -1;
  format::ProcessInfo info_;
};

TEST_F(SleepingPython, IsFoundAndItsFramesWalked) {
  EXPECT_EQ(inspect(python_layouts()), std::vector<uint32_t>{static_cast<uint32_t>(pid_)});
  EXPECT_EQ(info_.python.version >> 16, 0x030bu) << std::hex << info_.python.version;
  EXPECT_EQ(info_.python.error, "");
  EXPECT_FALSE(info_.python.build_id.empty());
  EXPECT_LT(info_.python.eval_start, info_.python.eval_end);
}

// A build whose structures are not where the layout says: recorded
// natively, with the reason, never walked with the wrong offsets.
TEST_F(SleepingPython, ALayoutThatDoesNotCheckOutIsNotWalked) {
  PythonLayout wrong = python_layouts()[0];
  wrong.walk.code_bytecode += 8;
  EXPECT_TRUE(inspect({&wrong, 1}).empty());
  EXPECT_NE(info_.python.error.find("its code objects are not 3.11's"), std::string::npos)
      << info_.python.error;

  PythonLayout threads = python_layouts()[0];
  threads.thread_interp += 8;
  EXPECT_TRUE(inspect({&threads, 1}).empty());
  EXPECT_NE(info_.python.error.find("its thread states are not 3.11's"), std::string::npos)
      << info_.python.error;
}

TEST_F(SleepingPython, AVersionWithoutALayoutIsNotWalked) {
  PythonLayout other = python_layouts()[0];
  other.minor = 12;
  EXPECT_TRUE(inspect({&other, 1}).empty());
  EXPECT_NE(info_.python.error.find(": ebprof reads 3.11 only"), std::string::npos)
      << info_.python.error;
}

TEST(PythonProcesses, AProcessWithoutPythonIsNoneOfItsBusiness) {
  ElfIdentities identities;
  format::ProcessInfo self = read_process(static_cast<uint32_t>(getpid()), 1, identities);
  bool published = false;
  PythonProcesses python([&](uint32_t, const ebprof_python_proc*) { published = true; });
  python.inspect(self);
  EXPECT_FALSE(published);
  EXPECT_EQ(self.python, format::PythonRuntime{});
}

}  // namespace
}  // namespace ebprof::record
