#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/recording.h"

namespace ebprof::format {

// Receives a recording's contents frame by frame, in file order. A batch's
// ids are validated before it is handed over: every sample's stack_id and
// comm_id refers to a stack or comm delivered earlier or in the same batch.
class RecordingVisitor {
 public:
  virtual ~RecordingVisitor() = default;
  virtual void on_info(RecordingInfo&& info) {}
  virtual void on_kernel_symbols(std::vector<KernelSymbol>&& symbols) {}
  virtual void on_process(ProcessInfo&& process) {}
  virtual void on_samples(SampleBatch&& batch) {}
  virtual void on_elf_symbols(EmbeddedSymbols&& symbols) {}
  virtual void on_end(RecordingEnd&& end) {}
};

struct ReadResult {
  uint64_t frames = 0;
  bool complete = true;  // false when the file ended early or a frame was damaged
  std::string warning;   // one line saying where and why reading stopped
};

// Streams the recording at `path` into `visitor`, one frame in memory at a
// time. Throws Error when the file cannot be used at all (missing, empty, not
// an ebprof recording, a newer major version, no header frame). Damage after
// the header frame ends reading with a warning, keeping what was read.
ReadResult read_recording(const std::string& path, RecordingVisitor& visitor);

}  // namespace ebprof::format
