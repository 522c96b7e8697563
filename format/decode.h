#pragma once

// Schema decoding: a frame's payload, once its framing and checksum hold,
// into the plain structs of contents.h, checked and handed to a visitor.
// Private to format/ (reader.cc reads the frames; this reads what is in
// them).

#include <zstd.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "format/framing.h"
#include "format/reader.h"

namespace ebprof::format {

// A file Process frames name their mappings' by id (1.10).
struct MappedFile {
  std::string path;
  std::string build_id;
  std::string debuglink;
};

// Tracks how many stacks and comms the file has defined so far, so that ids
// in later batches can be checked against them, and the mapped files its
// Process frames defined.
struct IdSpace {
  struct Counts {
    uint64_t stacks = 0;
    uint64_t comms = 0;
    uint64_t blocks = 0;
    uint64_t windows = 0;
  };
  Counts defined;
  // By id: a Copy standing in for a damaged Process frame defines its ids
  // after later frames defined theirs.
  std::unordered_map<uint32_t, MappedFile> files;
  // What a window of this source is checked against: its header's.
  uint32_t block_bytes = 0;
  size_t user_registers = 0;
  // Which source of a merged file frames belong to, and whether the current
  // one has delivered anything yet.
  uint32_t source = 0;
  bool source_has_content = false;
  bool has_info = false;              // the current source's header was read
  std::optional<uint32_t> merge_end;  // a merged file's end frame: how many sources it holds
  bool merged = false;                // a 2.x file: sources, each numbering its ids from 0

  // A source starts at its Source frame or, when that frame was lost, at
  // the next header: both visitors and id checks move on together.
  void start_source() {
    if (source_has_content)
      ++source;
    source_has_content = false;
    has_info = false;
    defined = {};
    files.clear();
  }
};

// The name `info` and `dump` give frames of `type` ("header", "samples"...).
const char* frame_type_name(uint16_t type);

// A frame's message bytes into `raw` (8-byte aligned, as Cap'n Proto words
// must be): decompressed, or copied. Returns why the frame is damaged, or "".
std::string unpack(const FrameHeader& h, const std::vector<uint8_t>& stored,
                   std::vector<uint64_t>& raw, ZSTD_DCtx* zstd);

// Decompresses and decodes one checked frame and hands it to the visitor.
// Returns why the frame is damaged, or "" when it was delivered. Nothing
// reaches the visitor from a damaged frame. Throws Error for a file whose
// first frame is not a header.
std::string decode_frame(const FrameHeader& h, const std::vector<uint8_t>& stored,
                         std::vector<uint64_t>& raw, ZSTD_DCtx* zstd, IdSpace& ids, bool allow_gaps,
                         RecordingVisitor& visitor, const FrameInfo& info, const std::string& path);

// The format version a header frame's message (unpacked into `raw`)
// repeats (1.4), if it decodes.
std::optional<std::pair<uint16_t, uint16_t>> header_version(const std::vector<uint64_t>& raw);

// The frame a Copy frame's message (unpacked into `raw`) holds, header and
// payload, pointing into `raw`; empty if it does not decode.
std::span<const uint8_t> copied_bytes(const std::vector<uint64_t>& raw);

}  // namespace ebprof::format
