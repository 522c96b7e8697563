#pragma once

// End-to-end: real BPF, a real workload, assertions on what the report says.
// Tests that need root or kernel BTF skip with the reason when it is absent.
// What more than one area's tests use: the binaries under test, commands
// run through the shell, and readings of what the tools leave behind.

#include <gtest/gtest.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ebprof::e2e {

namespace fs = std::filesystem;

extern const std::string kRecord;
extern const std::string kReport;
extern const std::string kHotcold;
extern const std::string kWithfp;
extern const std::string kLeafChain;

#define REQUIRE_BPF()                                        \
  do {                                                       \
    if (geteuid() != 0)                                      \
      GTEST_SKIP() << "needs root to load BPF programs";     \
    if (!std::filesystem::exists("/sys/kernel/btf/vmlinux")) \
      GTEST_SKIP() << "kernel has no BTF";                   \
  } while (0)

std::string temp_file(const std::string& name);

std::string slurp(const std::string& path);

struct Outcome {
  int status = -1;
  std::string out, err;
};

Outcome run(const std::string& command);

int lines(const std::string& s);

pid_t spawn(std::vector<std::string> argv);

int wait_exit(pid_t pid);

// Shares of the two call chains of hotcold in folded output.
struct Shares {
  uint64_t total = 0, via_a = 0, via_b = 0;
  double pct_a() const { return 100.0 * via_a / total; }
  double pct_b() const { return 100.0 * via_b / total; }
};

Shares hotcold_shares(const std::string& folded);

// A fresh directory for one test.
fs::path fresh_dir(const std::string& name);

// The files a --switch-output recording left at `out`, oldest first.
std::vector<std::string> switched_files(const std::string& out);

// The samples a recording holds, as info counts them.
uint64_t samples_in(const std::string& file);

}  // namespace ebprof::e2e
