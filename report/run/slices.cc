#include "report/run/slices.h"

#include <sys/stat.h>

#include <cerrno>
#include <ctime>
#include <map>

#include "common/error.h"
#include "common/output_file.h"

namespace ebprof::report {

size_t write_slices(const std::string& dir, const Profile& profile, uint64_t split_ns,
                    const std::string& extension, const SliceWriter& write) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw_errno("cannot make the directory " + dir + " (-o)", errno);
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error("-o " + dir + " is not a directory: --split writes one file per slice into one");
  std::map<uint32_t, Profile> slices;
  for (const ProfileStack& s : profile.stacks) {
    auto [it, inserted] = slices.try_emplace(s.key.slice);
    if (inserted)
      it->second = Profile{profile.summary, profile.unit, profile.names, profile.frames, {}};
    it->second.stacks.push_back(s);
  }
  for (auto& entry : slices) {
    // Named, not bound: a lambda below takes it, which clang 14 refuses
    // for a structured binding.
    const uint32_t slice = entry.first;
    Profile& part = entry.second;
    const uint64_t start_ns = uint64_t{slice} * split_ns;
    part.summary.start_realtime_ns = start_ns;
    part.summary.duration_s = static_cast<double>(split_ns) / 1e9;
    const auto seconds = static_cast<time_t>(start_ns / 1'000'000'000);
    tm utc{};
    gmtime_r(&seconds, &utc);
    char name[32];
    std::strftime(name, sizeof name, "%Y%m%dT%H%M%SZ", &utc);
    write_replacing(dir + "/" + name + extension, "-o",
                    [&](std::ostream& out) { write(out, part); });
  }
  return slices.size();
}

}  // namespace ebprof::report
