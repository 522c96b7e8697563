#pragma once

// --flight-recorder: the last DURATION of a recording kept in memory, as a
// run of slices each a whole recording (rotated as --switch-output rotates
// files, into memfds), and written out as one file when asked: a merged
// recording of the slices, which every report command reads.

#include <cstdint>
#include <deque>
#include <string>

#include "common/unique_fd.h"

namespace ebprof::record {

class FlightRecorder {
 public:
  // Keeps at least `window_ns` of slices, at most `max_bytes` of them.
  FlightRecorder(uint64_t window_ns, uint64_t max_bytes);

  // How long a slice lasts: a fifth of the window, at least a second.
  uint64_t slice_ns() const { return slice_ns_; }

  // A new slice to write a recording into; keep() takes it back once the
  // recording is whole. Throws Error when no memory file can be made.
  UniqueFd new_slice();
  // Keeps `slice` (a descriptor of what new_slice() gave), which ran from
  // `start_ns` to `end_ns`, and lets go of slices that ended before the
  // window or that the size cap has no room for, oldest first.
  void keep(UniqueFd slice, uint64_t start_ns, uint64_t end_ns);

  // Writes the slices kept that no earlier dump wrote as one merged
  // recording at `path`, a new file: dumps read together count each
  // sample once. Throws Error.
  struct Dumped {
    std::string path;  // `path`, or with a -N suffix when that was taken
    size_t slices = 0;
    uint64_t span_ns = 0;     // from the first slice's start to the last's end
    bool since_dump = false;  // an earlier dump holds the slices before these
  };
  // Writes the slices no earlier dump holds at `path` (or `path`-N when
  // taken: create_numbered()). Throws Error; the slices are then kept for
  // the next dump.
  Dumped dump(const std::string& path);

  uint64_t bytes() const { return bytes_; }

 private:
  void write_dump(UniqueFd fd, Dumped& d);
  struct Slice {
    UniqueFd fd;
    uint64_t start_ns = 0, end_ns = 0;
    uint64_t bytes = 0;
  };
  uint64_t window_ns_;
  uint64_t max_bytes_;
  uint64_t slice_ns_;
  std::deque<Slice> slices_;
  uint64_t bytes_ = 0;
  uint64_t dumped_until_ns_ = 0;  // the end of the last slice dumped
};

}  // namespace ebprof::record
