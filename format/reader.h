#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "format/contents.h"

namespace ebprof::format {

// Where a frame sits in the file and what it costs: for `info` and `dump`.
struct FrameInfo {
  uint64_t index = 0;     // 0-based
  uint64_t offset = 0;    // of the frame header
  const char* kind = "";  // "header", "kernel-symbols", ..., "unknown"
  uint32_t stored_size = 0;
  uint32_t raw_size = 0;
  bool compressed = false;
  // The source it belongs to: 0 in a recording; in a merged file, counted
  // from 0 at each Source frame (or header whose Source frame was lost).
  uint32_t source = 0;
};

// Receives a recording's contents frame by frame, in file order. A batch's
// ids are validated before it is handed over: every sample's stack_id and
// comm_id refers to a stack or comm defined earlier or in the same batch.
// After a damaged batch was skipped, a batch's first ids may jump past the
// ids defined so far; those lost stacks and comms are never delivered.
class RecordingVisitor {
 public:
  virtual ~RecordingVisitor() = default;
  // Called for each frame whose sizes and checksum are valid, before its
  // contents are decoded and handed to the callback for its kind.
  virtual void on_frame(const FrameInfo& frame) {}
  virtual void on_info(RecordingInfo&& info) {}
  virtual void on_kernel_symbols(std::vector<KernelSymbol>&& symbols) {}
  virtual void on_process(ProcessInfo&& process) {}
  virtual void on_samples(SampleBatch&& batch) {}
  virtual void on_elf_symbols(EmbeddedSymbols&& symbols) {}
  virtual void on_end(RecordingEnd&& end) {}
  virtual void on_losses(Losses&& losses) {}
  virtual void on_jit_symbols(JitSymbols&& symbols) {}
  virtual void on_python_code(PythonCode&& code) {}
  virtual void on_elf_cfi(ElfCfi&& cfi) {}
  // In a merged file, before each source's frames (its header first). Its
  // frames, and it, carry the source's index in FrameInfo::source.
  virtual void on_source(Source&& source) {}
};

struct ReadResult {
  uint16_t version_major = 0;
  uint16_t version_minor = 0;
  uint64_t frames = 0;
  bool complete = true;         // false when the file ended early or a frame was damaged
  uint64_t damaged_frames = 0;  // skipped: their contents never reach the visitor
  uint64_t skipped_bytes = 0;
  uint64_t joined = 0;  // recordings joined on after the first (cat a b >c)
  std::string warning;  // one line: what was skipped, and where the file ends early
};

// Streams the recording at `path` into `visitor`, one frame in memory at a
// time. Throws Error when the file cannot be used at all (missing, empty, not
// an ebprof recording, a newer major version, no intact header frame). A
// damaged frame is skipped (the reader resynchronises on the next frame whose
// checksum holds), and a file cut short is read up to its last complete
// frame; either way a one-line warning says so.
ReadResult read_recording(const std::string& path, RecordingVisitor& visitor);

// The (major, minor) format version in the file header of `path`; throws
// Error as read_recording does for a file that is not a recording.
std::pair<uint16_t, uint16_t> read_version(const std::string& path);

}  // namespace ebprof::format
