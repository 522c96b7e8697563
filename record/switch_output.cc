#include "record/switch_output.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <ctime>

#include "common/error.h"
#include "common/text.h"

namespace ebprof::record {

std::optional<SwitchOutput> parse_switch_output(std::string_view value) {
  if (value == "signal")
    return SwitchOutput{};
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  const std::string_view unit(end, value.data() + value.size() - end);
  if (ec != std::errc() || n == 0 || unit.size() != 1)
    return std::nullopt;
  const auto scaled = [&](uint64_t factor, SwitchOutput::When when) -> std::optional<SwitchOutput> {
    if (n > UINT64_MAX / factor)
      return std::nullopt;
    SwitchOutput s{.when = when};
    (when == SwitchOutput::When::kSize ? s.bytes : s.period_ns) = n * factor;
    return s;
  };
  constexpr uint64_t kSecond = 1'000'000'000;
  switch (unit[0]) {
    case 'B':
      return scaled(1, SwitchOutput::When::kSize);
    case 'K':
      return scaled(uint64_t{1} << 10, SwitchOutput::When::kSize);
    case 'M':
      return scaled(uint64_t{1} << 20, SwitchOutput::When::kSize);
    case 'G':
      return scaled(uint64_t{1} << 30, SwitchOutput::When::kSize);
    case 's':
      return scaled(kSecond, SwitchOutput::When::kTime);
    case 'm':
      return scaled(60 * kSecond, SwitchOutput::When::kTime);
    case 'h':
      return scaled(3600 * kSecond, SwitchOutput::When::kTime);
    case 'd':
      return scaled(86400 * kSecond, SwitchOutput::When::kTime);
    default:
      return std::nullopt;
  }
}

std::string switched_name(const std::string& output, uint64_t realtime_ns) {
  const time_t seconds = static_cast<time_t>(realtime_ns / 1'000'000'000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &utc);
  return output + "." + stamp + string_printf("%02u", unsigned(realtime_ns / 10'000'000 % 100));
}

std::string SwitchedFiles::keep(const std::string& output, uint64_t realtime_ns) {
  const std::string name = switched_name(output, realtime_ns);
  std::string to = name;
  // renameat2(RENAME_NOREPLACE): two switches within a hundredth of a
  // second, or a file of that name there before, keep both.
  for (int n = 1; renameat2(AT_FDCWD, output.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
       ++n) {
    if (errno != EEXIST || n > 99)
      throw_errno("cannot rename " + output + " to " + to, errno);
    to = name + "-" + std::to_string(n);
  }
  files_.push_back(to);
  ++kept_;
  while (max_files_ && files_.size() > max_files_) {
    unlink(files_.front().c_str());  // gone already is as good
    files_.pop_front();
  }
  return to;
}

}  // namespace ebprof::record
