#pragma once

#include <set>
#include <string>
#include <vector>

namespace ebprof::report {

// --follow over a rotation (--switch-output): the recorder writes NAME and,
// at each switch, renames it NAME.<UTC time>[-N] and starts NAME anew.
// Followed as one series: the files renamed since the follow began, in
// order, then NAME while it exists; a recording without rotation is NAME
// alone.
class FollowedSeries {
 public:
  // Notes the rotated files of NAME there already: an earlier series's.
  explicit FollowedSeries(std::string name);

  std::vector<std::string> files() const;

 private:
  std::vector<std::string> rotated() const;

  std::string name_;
  std::set<std::string> before_;
};

// Whether `file` is one of a rotation of `name`: NAME.<16 digits>[-N].
bool rotated_from(const std::string& file, const std::string& name);

}  // namespace ebprof::report
