#include "record/switch_output.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "common/error.h"
#include "common/text.h"

namespace ebprof::record {

std::optional<SwitchOutput> parse_switch_output(std::string_view value) {
  if (value == "signal")
    return SwitchOutput{};
  if (const std::optional<uint64_t> bytes = parse_size(value))
    return SwitchOutput{.when = SwitchOutput::When::kSize, .bytes = *bytes};
  if (const std::optional<uint64_t> ns = parse_duration_ns(value))
    return SwitchOutput{.when = SwitchOutput::When::kTime, .period_ns = *ns};
  return std::nullopt;
}

std::string switched_name(const std::string& output, uint64_t realtime_ns) {
  const time_t seconds = static_cast<time_t>(realtime_ns / 1'000'000'000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &utc);
  return output + "." + stamp + string_printf("%02u", unsigned(realtime_ns / 10'000'000 % 100));
}

UniqueFd create_numbered(const std::string& name, std::string& made) {
  made = name;
  for (int n = 1;; ++n) {
    UniqueFd fd(::open(made.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd)
      return fd;
    if (errno != EEXIST || n > 99)
      throw_errno("cannot make " + made, errno);
    made = name + "-" + std::to_string(n);
  }
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
