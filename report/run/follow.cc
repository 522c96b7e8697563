#include "report/run/follow.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>

namespace ebprof::report {

bool rotated_from(const std::string& file, const std::string& name) {
  constexpr size_t kStamp = 16;  // YYYYmmddHHMMSS and hundredths
  if (file.size() < name.size() + 1 + kStamp || file.compare(0, name.size(), name) != 0 ||
      file[name.size()] != '.')
    return false;
  const std::string suffix = file.substr(name.size() + 1);
  auto digits = [](std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(uint8_t(c)); });
  };
  if (!digits(std::string_view(suffix).substr(0, kStamp)))
    return false;
  return suffix.size() == kStamp || (suffix[kStamp] == '-' && digits(suffix.substr(kStamp + 1)));
}

FollowedSeries::FollowedSeries(std::string name) : name_(std::move(name)) {
  for (std::string& file : rotated())
    before_.insert(std::move(file));
}

std::vector<std::string> FollowedSeries::rotated() const {
  std::vector<std::string> files;
  glob_t matches{};
  if (glob((name_ + ".*").c_str(), 0, nullptr, &matches) == 0)
    for (size_t i = 0; i < matches.gl_pathc; ++i)
      if (rotated_from(matches.gl_pathv[i], name_))
        files.emplace_back(matches.gl_pathv[i]);
  globfree(&matches);
  // Time stamps sort as text; a -N suffix after its stamp's first file.
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> FollowedSeries::files() const {
  std::vector<std::string> files;
  for (std::string& file : rotated())
    if (!before_.contains(file))
      files.push_back(std::move(file));
  struct stat st {};
  // Alone when nothing was rotated: load() then says why it cannot be read.
  if (stat(name_.c_str(), &st) == 0 || files.empty())
    files.push_back(name_);
  return files;
}

}  // namespace ebprof::report
