#pragma once

#include <optional>

#include "record/elf_identities.h"
#include "record/process_source.h"
#include "record/side_band.h"

namespace ebprof::record {

// The processes of this machine: /proc for what is there now, the kernel's
// mapping events (when it gives them) for what changes.
class SystemProcesses : public ProcessSource {
 public:
  // Opens the mapping events first, so that no change can fall between
  // them and the /proc reads that follow. Without them (a kernel that
  // refuses, said once on stderr) /proc is read instead; without the
  // privileges for them, throws Error.
  SystemProcesses();

  format::ProcessInfo read(uint32_t pid, uint64_t now_ns) override;
  bool follows_events() const override { return side_band_.has_value(); }
  void drain_events(std::vector<TaskEvent>& out) override;
  bool alive(uint32_t pid) override;
  void describe(uint32_t pid, format::ProcessInfo& info) override;

  ElfIdentities& identities() { return identities_; }

 private:
  std::optional<SideBand> side_band_;
  ElfIdentities identities_;
};

}  // namespace ebprof::record
