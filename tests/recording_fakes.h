#pragma once

// Small recordings written with the real writer, for the load stage's and
// the run's tests.

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "format/reader.h"
#include "format/writer.h"

namespace ebprof::report::fakes {

inline std::string write_small_recording(const std::string& name = "small.data") {
  std::string path = ::testing::TempDir() + "/" + name;
  auto w = format::RecordingWriter::create(path);
  format::RecordingInfo info;
  info.writer_version = "9.9.9";
  info.hostname = "box";
  info.event = "cpu-clock";
  info.sample_frequency = 99;
  info.cpu_count = 4;
  info.command_line = {"ebprof-record", "-a"};
  info.start_monotonic_ns = 1'000'000'000;
  w.write(info);
  w.write(format::ProcessInfo{
      7, "app", 1'000'000'000, {{0x1000, 0x2000, 0, "/bin/app", "\xab\xcd", "app.debug"}}, ""});
  w.write(format::EmbeddedSymbols{"\xab\xcd", "/bin/app", {{0, 0, 0x2000}}, {{0x1000, 0x10, "f"}}});
  format::SampleBatch b;
  b.stacks = {{{}, {0x1004}}};
  b.comms = {"app"};
  b.cgroups = {{0x1234, "/system.slice/app.service"}};
  b.samples = {{1'500'000'000, 7, 7, 1, 0, 0}, {1'600'000'000, 7, 8, 2, 0, 0}};
  b.samples[0].cgroup = 0;  // the second ran in none
  w.write(b);
  using format::LossCause;
  w.write(format::Losses{
      2'000'000'000,
      {{LossCause::kBufferFull, 2, false, 1}, {LossCause::kUserStackUnreadable, 1, true, 0}}});
  w.write(format::RecordingEnd{
      3'000'000'000, {{LossCause::kBufferFull, 2}, {LossCause::kUserStackUnreadable, 1, true}}});
  w.close();
  return path;
}

// Offsets of the frames of `kind` in the recording at `path`.
inline std::vector<uint64_t> frames_of(const std::string& path, const std::string& kind) {
  struct Finder : format::RecordingVisitor {
    std::string kind;
    std::vector<uint64_t> offsets;
    void on_frame(const format::FrameInfo& f) override {
      if (f.kind == kind)
        offsets.push_back(f.offset);
    }
  } finder;
  finder.kind = kind;
  format::read_recording(path, finder);
  return finder.offsets;
}

// Flips a byte inside the payload of the frame at `offset`: its checksum
// then fails and the reader skips it.
inline void damage_frame(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset + 20));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(offset + 20));
  f.write(&c, 1);
}

}  // namespace ebprof::report::fakes
