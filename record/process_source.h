#pragma once

#include <cstdint>
#include <vector>

#include "format/contents.h"
#include "record/task_events.h"

namespace ebprof::record {

// Where ProcessTracker learns about processes: /proc, the kernel's task
// events, the identities of mapped files. The system's (SystemProcesses)
// in the recorder, a fake in tests, which then never touch /proc.
class ProcessSource {
 public:
  virtual ~ProcessSource() = default;
  // A process's comm and maps as /proc shows them now, identities included.
  virtual format::ProcessInfo read(uint32_t pid, uint64_t now_ns) = 0;
  // Whether task events come at all; without them /proc is all there is.
  virtual bool follows_events() const { return false; }
  // Appends the task events that arrived since the last call.
  virtual void drain_events(std::vector<TaskEvent>& out) {}
  // Whether process `pid` is still there (a zombie is).
  virtual bool alive(uint32_t pid) { return true; }
  // Completes what events cannot tell about a process about to be written:
  // its mappings' build-ids (when the kernel gave none) and debuglinks, and
  // its place (namespaces, root) when unknown.
  virtual void describe(uint32_t pid, format::ProcessInfo& info) {}
};

}  // namespace ebprof::record
