#include "format/losses.h"

#include <array>

namespace ebprof::format {
namespace {

// As files name them: these texts are the format, not presentation.
constexpr std::array<const char*, kLossCauses> kNames = {
    "buffer full",
    "kernel stack unreadable",
    "user stack unreadable",
    "stack truncated at 127 frames",
    "perf buffer output failed",
    "off-CPU table full",
    "malformed record",
    "unknown cause",
};

}  // namespace

const char* loss_cause_name(LossCause cause) {
  const auto i = static_cast<size_t>(cause);
  return i < kNames.size() ? kNames[i] : kNames.back();
}

LossCause parse_loss_cause(std::string_view name) {
  for (size_t i = 0; i + 1 < kNames.size(); ++i)
    if (name == kNames[i])
      return static_cast<LossCause>(i);
  return LossCause::kUnknown;
}

bool loss_keeps_sample(LossCause cause) {
  return cause == LossCause::kKernelStackUnreadable || cause == LossCause::kUserStackUnreadable ||
         cause == LossCause::kStackTruncated;
}

}  // namespace ebprof::format
