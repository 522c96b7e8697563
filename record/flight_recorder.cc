#include "record/flight_recorder.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "common/error.h"
#include "format/writer.h"

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

void FlightRecorder::keep(UniqueFd slice, uint64_t end_ns) {
  struct stat st {};
  fstat(slice.get(), &st);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  slices_.push_back({std::move(slice), end_ns, size});
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

size_t FlightRecorder::dump(const std::string& path) const {
  auto writer = format::RecordingWriter::create(path, {.merged = true});
  uint32_t index = 0;
  for (const Slice& s : slices_) {
    const auto [major, minor] = format::written_version();
    writer.write(format::Source{index++, "flight recorder slice", major, minor});
    writer.append_frames(s.fd.get());
  }
  writer.write(format::MergeEnd{index});
  writer.close();
  return slices_.size();
}

}  // namespace ebprof::record
