#include "record/system_processes.h"

#include <signal.h>

#include <cerrno>
#include <cstdio>

#include "common/error.h"
#include "record/perf_events.h"
#include "record/privileges.h"
#include "record/proc_maps.h"

namespace ebprof::record {
namespace {

// The kernel's mapping events, if it will give them; without them a process
// that exits before its first sample is read shows no names.
std::optional<SideBand> open_side_band() {
  try {
    return std::optional<SideBand>(std::in_place, online_cpus());
  } catch (const Error& e) {
    if (e.code() == EPERM || e.code() == EACCES)
      throw missing_privileges("opening mapping events");
    std::fprintf(stderr,
                 "ebprof-record: warning: no mapping events (%s): processes that exit quickly "
                 "may show unnamed frames\n",
                 e.what());
    return std::nullopt;
  }
}

}  // namespace

SystemProcesses::SystemProcesses() : side_band_(open_side_band()) {}

format::ProcessInfo SystemProcesses::read(uint32_t pid, uint64_t now_ns) {
  return read_process(pid, now_ns, identities_);
}

void SystemProcesses::drain_events(std::vector<TaskEvent>& out) {
  if (!side_band_)
    return;
  const size_t first = out.size();
  side_band_->drain(out);
  // As soon as they arrive: the files a short-lived process mapped are
  // still there, the process no longer.
  for (size_t i = first; i < out.size(); ++i)
    if (TaskEvent& e = out[i]; e.kind == TaskEvent::Kind::kMmap)
      identities_.identify(e.pid, e.mapping, e.device, e.inode);
}

bool SystemProcesses::alive(uint32_t pid) {
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

void SystemProcesses::describe(uint32_t pid, format::ProcessInfo& info) {
  for (format::Mapping& m : info.mappings)
    identities_.identify(pid, m);
  if (!info.place.pid_namespace || !info.place.namespace_pid)
    if (format::ProcessPlace place = read_place(pid); place.pid_namespace)
      info.place = std::move(place);
}

}  // namespace ebprof::record
