// The one place errors become output: one line, exit status 1, whatever
// escapes.
#include "common/main_guard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <new>
#include <stdexcept>

namespace ebprof {
namespace {

TEST(MainGuard, EachFailureIsOneLineAndStatusOne) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_guarded("tool", [] { throw Error("no such file: check it"); }), 1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tool: no such file: check it\n");
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_guarded("tool", [] { throw std::bad_alloc(); }), 1);
  const std::string memory = testing::internal::GetCapturedStderr();
  EXPECT_NE(memory.find("tool: out of memory"), std::string::npos) << memory;
  EXPECT_EQ(memory.find("internal error"), std::string::npos) << "not a bug: " << memory;
  EXPECT_EQ(std::count(memory.begin(), memory.end(), '\n'), 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_guarded("tool", [] { throw std::logic_error("x"); }), 1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tool: internal error: x\n");
  EXPECT_EQ(run_guarded("tool", [] {}), 0);
}

}  // namespace
}  // namespace ebprof
