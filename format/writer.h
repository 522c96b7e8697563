#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/unique_fd.h"
#include "format/contents.h"

struct ZSTD_CCtx_s;
namespace capnp {
class MessageBuilder;
}

namespace ebprof::format {

enum class FrameType : uint16_t;

struct WriterOptions {
  bool compress = true;  // zstd each frame
  int zstd_level = 3;
  // A merged file, whose sources each start at a Source frame (format 2.0).
  bool merged = false;
};

// The format version of the recordings a RecordingWriter makes (merged
// files aside): what a merged file's Source says of one appended whole.
std::pair<uint16_t, uint16_t> written_version();

// Appends frames to a recording. Every write() is one self-contained frame
// that reaches the kernel before write() returns, so a recorder killed at any
// point leaves a file readable up to its last complete frame.
class RecordingWriter {
 public:
  // Creates `path` anew, replacing a regular file there (never writing
  // through a link, nor into a device or FIFO: common/output_file.h), and
  // writes the file header.
  static RecordingWriter create(const std::string& path, WriterOptions options = {});
  // Writes the file header to `fd`, a new file; `path` names it in messages.
  static RecordingWriter create(UniqueFd fd, std::string path, WriterOptions options = {});

  // Writes the header frame and, after it, its copy.
  void write(const RecordingInfo& info);
  void write(const std::vector<KernelSymbol>& symbols);
  void write(const ProcessInfo& process);
  void write(const SampleBatch& batch);
  void write(const RecordingEnd& end);
  void write(const Losses& losses);
  void write(const JitSymbols& symbols);
  void write(const PythonCode& code);
  void write(const EmbeddedSymbols& symbols);
  void write(const ElfCfi& cfi);
  void write(const Source& source);  // only with WriterOptions::merged
  // Only with WriterOptions::merged, after a Source: the frames of the
  // recording open at `fd` (one a merged RecordingWriter wrote whole, with
  // no Source frame, end frame included), as they are, its file header
  // left out.
  void append_frames(int fd);
  void write(const MergeEnd& end);  // only with WriterOptions::merged, last

  // Flushes nothing (there is no buffer) but reports a failed close.
  void close();
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  struct ZstdFree {
    void operator()(ZSTD_CCtx_s* ctx) const;
  };
  RecordingWriter(UniqueFd fd, std::string path, WriterOptions options);
  void write_message(FrameType type, capnp::MessageBuilder& message);
  void write_frame(FrameType type, const void* data, size_t size, bool compress = true);
  // Writes the copies of the frames written since the last call.
  void write_copies();
  void write_all(const void* data, size_t size);

  UniqueFd fd_;
  std::string path_;
  WriterOptions options_;
  std::unique_ptr<ZSTD_CCtx_s, ZstdFree> zstd_;
  std::vector<uint8_t> compressed_;
  // Frames of copied_type()s, header and payload, to write again once a
  // sample batch separates them from the original: damage seldom reaches
  // both. Before a Source frame, a merged source's copies stay its own.
  std::vector<std::vector<uint8_t>> copies_;
  // Mapped files by (path, build-id, debuglink), and their ids (1.10), in
  // this file or merged source. A Process frame names only files it
  // defines or that a frame already copied defined: a reader whose frame
  // was damaged has read its copy before it needs what the frame defined.
  std::map<std::tuple<std::string, std::string, std::string>, uint32_t> file_ids_;
  uint32_t next_file_id_ = 0;
  uint32_t copied_file_ids_ = 0;  // ids below this were defined in copied frames
  static constexpr size_t kMaxFileIds = 1 << 16;
  uint64_t bytes_written_ = 0;
};

}  // namespace ebprof::format
