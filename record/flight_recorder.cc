#include "record/flight_recorder.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/error.h"
#include "format/writer.h"
#include "record/switch_output.h"

namespace ebprof::record {

FlightRecorder::FlightRecorder(uint64_t window_ns, uint64_t max_bytes)
    : window_ns_(window_ns),
      max_bytes_(max_bytes),
      slice_ns_(std::max<uint64_t>(window_ns / 5, 1'000'000'000)) {}

UniqueFd FlightRecorder::new_slice() {
  UniqueFd fd(memfd_create("ebprof-flight-recorder", MFD_CLOEXEC));
  if (!fd)
    throw_errno("cannot make a memory file for --flight-recorder", errno);
  return fd;
}

void FlightRecorder::keep(UniqueFd slice, uint64_t start_ns, uint64_t end_ns) {
  struct stat st {};
  fstat(slice.get(), &st);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  slices_.push_back({std::move(slice), start_ns, end_ns, size});
  bytes_ += size;
  // The oldest slice goes once the window is covered without it (the next
  // one began where it ended), or when the slices do not fit the cap (the
  // newest stays, whatever its size).
  while (slices_.size() > 1 &&
         (slices_.front().end_ns + window_ns_ <= end_ns || bytes_ > max_bytes_)) {
    bytes_ -= slices_.front().bytes;
    slices_.pop_front();
  }
}

FlightRecorder::Dumped FlightRecorder::dump(const std::string& path) {
  Dumped d;
  UniqueFd fd = create_numbered(path, d.path);
  try {
    write_dump(std::move(fd), d);
  } catch (const Error&) {
    unlink(d.path.c_str());  // made by us, whole or not at all
    throw;
  }
  return d;
}

void FlightRecorder::write_dump(UniqueFd fd, Dumped& d) {
  auto writer = format::RecordingWriter::create(std::move(fd), d.path, {.merged = true});
  uint32_t index = 0;
  uint64_t first_start = 0;
  for (const Slice& s : slices_) {
    // A dump ends the slice under way, so slices never straddle one.
    if (s.end_ns <= dumped_until_ns_) {
      d.since_dump = true;
      continue;
    }
    if (index == 0)
      first_start = s.start_ns;
    const auto [major, minor] = format::written_version();
    writer.write(format::Source{index++, "flight recorder slice", major, minor});
    writer.append_frames(s.fd.get());
  }
  writer.write(format::MergeEnd{index});
  writer.close();
  d.slices = index;
  if (index) {
    d.span_ns = slices_.back().end_ns - first_start;
    dumped_until_ns_ = slices_.back().end_ns;
  }
}

}  // namespace ebprof::record
