#pragma once

// --switch-output, as perf's: when a recording moves on to a new file, and
// what becomes of the files it leaves. Each file is a recording of its own.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "common/unique_fd.h"

namespace ebprof::record {

struct SwitchOutput {
  enum class When : uint8_t { kSignal, kSize, kTime };
  When when = When::kSignal;
  uint64_t bytes = 0;      // kSize: once the file holds this much
  uint64_t period_ns = 0;  // kTime: once the file is this old
};

// perf's values: "signal" (SIGUSR2), a size with B, K, M or G (100M), a
// time with s, m, h or d (30s); nullopt for anything else.
std::optional<SwitchOutput> parse_switch_output(std::string_view value);

// `output`.YYYYmmddHHMMSScc, the UTC time `realtime_ns` to the hundredth
// of a second: perf's name for a file it switched from.
std::string switched_name(const std::string& output, uint64_t realtime_ns);

// Makes a new file for a --flight-recorder dump at `name`, or `name`-1,
// `name`-2, ... when that is taken (two dumps within a hundredth of a
// second, a file or a link planted there): never replacing a file, never
// through a link. Sets `made` to the name. Throws Error.
UniqueFd create_numbered(const std::string& name, std::string& made);

// The files a recording switched from, oldest first: at most `max_files`
// of them are kept (0: all), the oldest removed first.
class SwitchedFiles {
 public:
  explicit SwitchedFiles(uint32_t max_files) : max_files_(max_files) {}
  // Renames the finished `output` to its switched name (with a -N suffix
  // should that name be taken, never replacing a file), then removes the
  // oldest past the limit. Returns the name. Throws Error.
  std::string keep(const std::string& output, uint64_t realtime_ns);
  // Every file kept so far, removed ones included.
  uint64_t kept() const { return kept_; }
  const std::deque<std::string>& files() const { return files_; }

 private:
  uint32_t max_files_;
  std::deque<std::string> files_;  // those still there
  uint64_t kept_ = 0;
};

}  // namespace ebprof::record
