#pragma once

// A ProcessSource for tests: /proc reads and task events from functions.

#include <functional>
#include <vector>

#include "record/process_source.h"

namespace ebprof::record::fakes {

struct FakeProcesses : ProcessSource {
  std::function<format::ProcessInfo(uint32_t pid, uint64_t now_ns)> on_read;
  std::function<void(std::vector<TaskEvent>& out)> on_drain;  // null: no task events
  std::function<bool(uint32_t pid)> on_alive;                 // null: every process lives

  format::ProcessInfo read(uint32_t pid, uint64_t now_ns) override { return on_read(pid, now_ns); }
  bool follows_events() const override { return static_cast<bool>(on_drain); }
  void drain_events(std::vector<TaskEvent>& out) override {
    if (on_drain)
      on_drain(out);
  }
  bool alive(uint32_t pid) override { return !on_alive || on_alive(pid); }
};

}  // namespace ebprof::record::fakes
