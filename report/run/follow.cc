#include "report/run/follow.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <memory>

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
  // Listed, not globbed: [, * and ? in a path are its own characters.
  const size_t slash = name_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : name_.substr(0, slash + 1);
  const std::string prefix = slash == std::string::npos ? "" : dir;
  std::vector<std::string> files;
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(dir.c_str()), closedir);
  while (d)
    if (const dirent* e = readdir(d.get())) {
      std::string file = prefix + e->d_name;
      if (rotated_from(file, name_))
        files.push_back(std::move(file));
    } else {
      break;
    }
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
