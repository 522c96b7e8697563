#include "report/load/recording.h"

namespace ebprof::report {

std::string cgroup_name(const format::Cgroup& cgroup) {
  return cgroup.path.empty() ? "[cgroup " + std::to_string(cgroup.id) + "]" : cgroup.path;
}

uint32_t NameTable::intern(const std::string& name) {
  auto [it, inserted] = index_.try_emplace(name, static_cast<uint32_t>(names_.size()));
  if (inserted)
    names_.push_back(name);
  return it->second;
}

}  // namespace ebprof::report
