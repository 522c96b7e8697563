#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "common/error.h"
#include "format/crc32c.h"
#include "format/framing.h"
#include "format/losses.h"
#include "format/reader.h"
#include "format/writer.h"

namespace ebprof::format {
namespace {

struct Collected : RecordingVisitor {
  std::optional<RecordingInfo> info;
  std::vector<KernelSymbol> kernel_symbols;
  std::vector<ProcessInfo> processes;
  std::vector<SampleBatch> batches;
  std::optional<RecordingEnd> end;
  std::vector<EmbeddedSymbols> embedded;

  void on_elf_symbols(EmbeddedSymbols&& e) override { embedded.push_back(std::move(e)); }
  void on_info(RecordingInfo&& i) override { info = std::move(i); }
  void on_kernel_symbols(std::vector<KernelSymbol>&& s) override { kernel_symbols = std::move(s); }
  void on_process(ProcessInfo&& p) override { processes.push_back(std::move(p)); }
  void on_samples(SampleBatch&& b) override { batches.push_back(std::move(b)); }
  void on_end(RecordingEnd&& e) override { end = std::move(e); }
};

std::string temp_file(const std::string& name) {
  return (std::filesystem::path(testing::TempDir()) / name).string();
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

RecordingInfo make_info() {
  RecordingInfo info;
  info.writer_version = "0.1.0";
  info.hostname = "host";
  info.kernel_release = "6.1.0";
  info.machine = "x86_64";
  info.command_line = {"ebprof-record", "-F", "99"};
  info.event = "cpu-clock";
  info.sample_frequency = 99;
  info.start_realtime_ns = 1'700'000'000'000'000'000;
  info.start_monotonic_ns = 5'000'000'000;
  info.cpu_count = 2;
  info.transport = "ringbuf";
  return info;
}

SampleBatch first_batch() {
  SampleBatch b;
  b.stacks = {Stack{{0xffffffff81000010, 0xffffffff81000200}, {0x401000, 0x402000}},
              Stack{{}, {0x401010}}};
  b.comms = {"hotcold"};
  // The second sample is older than the first: ring-buffer order across CPUs.
  b.samples = {Sample{5'000'000'100, 10, 11, 0, 0, 0}, Sample{5'000'000'050, 10, 12, 1, 1, 0},
               Sample{5'000'010'000, 10, 11, 1, 0, 0}};
  // Cgroups (1.7): one whose path could not be read; the second sample ran in none.
  b.cgroups = {{42, "/system.slice/hotcold.service"}, {7, ""}};
  b.samples[0].cgroup = 1;
  b.samples[2].cgroup = 0;
  // Periods (1.10): the kernel adapts them at -F; 0 stands for one event.
  b.samples[0].period = 250;
  b.samples[1].period = 1;
  return b;
}

SampleBatch second_batch() {
  SampleBatch b;
  b.first_stack_id = 2;
  b.first_comm_id = 1;
  b.stacks = {Stack{{}, {0x7f0000001000}}};
  b.comms = {"worker"};
  b.samples = {Sample{6'000'000'000, 20, 20, 1, 2, 1}, Sample{6'000'000'001, 10, 11, 0, 0, 0}};
  return b;
}

void write_recording(const std::string& path, bool compress, const SampleBatch& second) {
  auto w = RecordingWriter::create(path, {.compress = compress});
  w.write(make_info());
  w.write(std::vector<KernelSymbol>{{0xffffffff81000000, "_stext", "", 0x100},
                                    {0xffffffff81000100, "do_thing", "", 0x80},
                                    {0xffffffffc0000000, "ext4_read", "ext4", 0x40}});
  w.write(ProcessInfo{10,
                      "hotcold",
                      5'000'000'000,
                      {Mapping{0x400000, 0x403000, 0x1000, "/usr/bin/hot cold"}},
                      ""});
  w.write(first_batch());
  w.write(ProcessInfo{20, "worker", 5'500'000'000, {}, "process exited before its maps were read"});
  w.write(second);
  w.write(EmbeddedSymbols{"\x12\x34",
                          "/usr/bin/hot cold",
                          {{0x1000, 0x401000, 0x2000}},
                          {{0x401000, 0x40, "_Z4mainv"}, {0x401040, 0x10, "helper"}}});
  w.write(RecordingEnd{7'000'000'000,
                       {{LossCause::kBufferFull, 3}, {LossCause::kUserStackUnreadable, 0}}});
  w.close();
}

class RoundTrip : public testing::TestWithParam<bool> {};

TEST_P(RoundTrip, EveryFrameKindReadsBackAsWritten) {
  std::string path = temp_file(GetParam() ? "roundtrip-zstd.data" : "roundtrip-raw.data");
  write_recording(path, GetParam(), second_batch());
  Collected c;
  ReadResult r = read_recording(path, c);
  EXPECT_TRUE(r.complete) << r.warning;
  // The header twice; the maps again after the next batch (since 1.9 they
  // alone are copied), and read once.
  EXPECT_EQ(r.frames, 11u);

  ASSERT_TRUE(c.info);
  EXPECT_EQ(c.info->command_line, make_info().command_line);
  EXPECT_EQ(c.info->start_realtime_ns, make_info().start_realtime_ns);
  EXPECT_EQ(c.info->transport, "ringbuf");
  ASSERT_EQ(c.kernel_symbols.size(), 3u);
  EXPECT_EQ(c.kernel_symbols[2].module, "ext4");
  EXPECT_EQ(c.kernel_symbols[1].name, "do_thing");
  EXPECT_EQ(c.kernel_symbols[1].size, 0x80u);
  ASSERT_EQ(c.processes.size(), 2u);
  EXPECT_EQ(c.processes[0].mappings[0].path, "/usr/bin/hot cold");
  EXPECT_EQ(c.processes[0].mappings[0].file_offset, 0x1000u);
  EXPECT_EQ(c.processes[1].maps_error, "process exited before its maps were read");

  ASSERT_EQ(c.batches.size(), 2u);
  const SampleBatch& b = c.batches[0];
  EXPECT_EQ(b.stacks, first_batch().stacks);
  EXPECT_EQ(b.comms, first_batch().comms);
  ASSERT_EQ(b.samples.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(b.samples[i].time_ns, first_batch().samples[i].time_ns);
    EXPECT_EQ(b.samples[i].tid, first_batch().samples[i].tid);
    EXPECT_EQ(b.samples[i].cpu, first_batch().samples[i].cpu);
    EXPECT_EQ(b.samples[i].stack_id, first_batch().samples[i].stack_id);
    EXPECT_EQ(b.samples[i].period, first_batch().samples[i].period);
  }
  EXPECT_EQ(c.batches[1].samples[0].comm_id, 1u);
  EXPECT_EQ(c.batches[1].samples[0].period, 0u) << "a batch without periods";
  ASSERT_EQ(c.embedded.size(), 1u);
  EXPECT_EQ(c.embedded[0].build_id, "\x12\x34");
  EXPECT_EQ(c.embedded[0].segments[0].vaddr, 0x401000u);
  ASSERT_EQ(c.embedded[0].symbols.size(), 2u);
  EXPECT_EQ(c.embedded[0].symbols[1].name, "helper");
  EXPECT_EQ(c.embedded[0].symbols[1].size, 0x10u);
  ASSERT_TRUE(c.end);
  EXPECT_EQ(c.end->losses[0].cause, LossCause::kBufferFull);
  EXPECT_EQ(c.end->losses[0].count, 3u);
}

INSTANTIATE_TEST_SUITE_P(Compression, RoundTrip, testing::Values(true, false),
                         [](const auto& p) { return p.param ? "zstd" : "raw"; });

std::string error_of(const std::string& path) {
  Collected c;
  try {
    read_recording(path, c);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The Castagnoli check value, and every length and alignment against a
// bit-at-a-time reference: the hardware path (SSE 4.2) and the table agree.
// Intervals off CPU (1.2) keep their length and state; batches without
// them carry no off-CPU columns, and samples read back as on CPU.
TEST(Reader, OffCpuIntervalsReadBackAsWritten) {
  std::string path = temp_file("offcpu.data");
  SampleBatch mixed = second_batch();
  mixed.samples[1].blocked_ns = 123'456'789;
  mixed.samples[1].state = BlockState::kUninterruptible;
  mixed.samples[1].waker_stack_id = 1;
  mixed.samples[1].waker_pid = 30;
  mixed.samples[1].waker_tid = 31;
  mixed.samples[1].waker_comm_id = 0;
  {
    auto w = RecordingWriter::create(path);
    RecordingInfo info = make_info();
    info.off_cpu = "raw_tp/sched_switch";
    info.off_cpu_min_block_ns = 1000;
    info.off_cpu_states = 0x6;
    info.sampling = false;
    w.write(info);
    w.write(first_batch());
    w.write(mixed);
    w.close();
  }
  Collected c;
  read_recording(path, c);
  ASSERT_TRUE(c.info);
  EXPECT_EQ(c.info->off_cpu, "raw_tp/sched_switch");
  EXPECT_EQ(c.info->off_cpu_min_block_ns, 1000u);
  EXPECT_EQ(c.info->off_cpu_states, 0x6u);
  EXPECT_FALSE(c.info->sampling);
  ASSERT_EQ(c.batches.size(), 2u);
  for (const Sample& s : c.batches[0].samples)
    EXPECT_EQ(s.blocked_ns, 0u);
  EXPECT_EQ(c.batches[1].samples[0].blocked_ns, 0u);
  EXPECT_EQ(c.batches[1].samples[1].blocked_ns, 123'456'789u);
  EXPECT_EQ(c.batches[1].samples[1].state, BlockState::kUninterruptible);
  EXPECT_EQ(c.batches[1].samples[1].waker_stack_id, 1u);
  EXPECT_EQ(c.batches[1].samples[1].waker_tid, 31u);
  EXPECT_EQ(c.batches[1].samples[0].waker_stack_id, kNoWaker);

  // A file from before 1.2 samples on CPU.
  std::string old = temp_file("no-offcpu.data");
  write_recording(old, true, second_batch());
  Collected o;
  read_recording(old, o);
  ASSERT_TRUE(o.info);
  EXPECT_TRUE(o.info->sampling);
  EXPECT_TRUE(o.info->off_cpu.empty());
}

TEST(Crc32c, MatchesTheStandardAndABitwiseReference) {
  EXPECT_EQ(crc32c(0, "123456789", 9), 0xe3069283u);
  auto bitwise = [](const uint8_t* p, size_t n) {
    uint32_t c = ~0u;
    for (size_t i = 0; i < n; ++i) {
      c ^= p[i];
      for (int b = 0; b < 8; ++b)
        c = (c & 1) ? (c >> 1) ^ 0x82f63b78 : c >> 1;
    }
    return ~c;
  };
  std::vector<uint8_t> bytes(100);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  for (size_t start = 0; start < 9; ++start)
    for (size_t n = 0; start + n <= bytes.size(); n += 7)
      EXPECT_EQ(crc32c(0, bytes.data() + start, n), bitwise(bytes.data() + start, n))
          << start << " " << n;
  // Chained: the CRC of a whole equals the CRC continued over its parts.
  EXPECT_EQ(crc32c(crc32c(0, bytes.data(), 41), bytes.data() + 41, 59),
            crc32c(0, bytes.data(), 100));
}

TEST(Reader, RejectsFilesItCannotUseWithOneClearLine) {
  EXPECT_NE(error_of(temp_file("does-not-exist")).find("cannot open"), std::string::npos);

  std::string empty = temp_file("empty.data");
  write_bytes(empty, "");
  EXPECT_NE(error_of(empty).find("is empty"), std::string::npos);

  std::string foreign = temp_file("foreign.data");
  write_bytes(foreign, "PERFILE2 this is a perf.data file, not ours");
  EXPECT_NE(error_of(foreign).find("not an ebprof recording"), std::string::npos);

  // A newer file's frames are not this reader's to decode: a file header of
  // version 3 and frames of some future layout.
  std::string newer = temp_file("newer.data");
  write_recording(newer, true, second_batch());
  std::string bytes = read_bytes(newer).substr(0, kFileHeaderSize) + std::string(64, 'x');
  bytes[8] = 3;  // major version 3: 2 is a merged file
  write_bytes(newer, bytes);
  std::string message = error_of(newer);
  EXPECT_NE(message.find("format version 3."), std::string::npos) << message;
  EXPECT_NE(message.find(", newer than this ebprof-report reads (up to 2.x): upgrade ebprof"),
            std::string::npos)
      << message;
  for (const std::string& m : {error_of(empty), error_of(foreign), message})
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

// A recorder killed mid-write leaves a prefix of a valid file: every prefix
// must read up to its last complete frame, and say so.
TEST(Reader, EveryTruncationReadsTheCompleteFramesBeforeIt) {
  std::string full_path = temp_file("full.data");
  write_recording(full_path, false, second_batch());
  const std::string full = read_bytes(full_path);

  // Frame boundaries, from reading each prefix that ends on one.
  std::string cut = temp_file("cut.data");
  uint64_t last_frames = 0;
  for (size_t size = 0; size < full.size(); ++size) {
    write_bytes(cut, full.substr(0, size));
    Collected c;
    try {
      ReadResult r = read_recording(cut, c);
      EXPECT_GE(r.frames, last_frames) << "cut at " << size;
      EXPECT_GE(r.frames, 1u);
      if (!r.complete) {
        EXPECT_NE(r.warning.find("cut short"), std::string::npos) << r.warning;
      }
      EXPECT_FALSE(c.end) << "cut at " << size;
      last_frames = r.frames;
    } catch (const Error& e) {
      // Only a file without one whole frame is unusable.
      EXPECT_EQ(last_frames, 0u) << "cut at " << size << ": " << e.what();
    }
  }
  EXPECT_EQ(last_frames, 10u);
}

// A flipped byte damages exactly one frame: the reader reports it, skips
// it, resynchronises on the next frame and delivers everything else.
TEST(Reader, ADamagedFrameIsSkippedAndEveryOtherFrameRead) {
  std::string path = temp_file("flip.data");
  for (bool compress : {false, true}) {
    write_recording(path, compress, second_batch());
    const std::string good = read_bytes(path);
    Collected all;
    const uint64_t frames = read_recording(path, all).frames;
    struct LastFrame : Collected {
      uint64_t last_at = 0;
      void on_frame(const FrameInfo& f) override { last_at = f.offset; }
    } last;
    read_recording(path, last);
    // Bytes 12..15 of the file header are reserved and not checked. Damage
    // in the header frame costs it alone too: its copy stands in (1.4).
    for (size_t i = 16; i < good.size(); ++i) {
      std::string bad = good;
      bad[i] ^= 0x5a;
      write_bytes(path, bad);
      Collected c;
      ReadResult r = read_recording(path, c);
      EXPECT_TRUE(c.info) << "byte " << i << ": the header is lost";
      EXPECT_EQ(r.frames, frames - 1) << "byte " << i << ": " << r.warning;
      // A damaged length in the last frame looks like a cut: nothing follows.
      bool skipped = r.warning.find("1 damaged frame(s) skipped") != std::string::npos;
      bool cut = r.warning.find("cut short") != std::string::npos && i >= last.last_at;
      EXPECT_TRUE(skipped || cut) << "byte " << i << ": " << r.warning;
    }
  }
}

// The maps name every sample of their process: damage to them costs
// nothing, their copy after the next batch (1.6) stands in for them. Since
// 1.9 symbol tables are not copied: damage to one costs its names alone.
TEST(Reader, ADamagedMapsFrameIsReadFromItsCopy) {
  std::string path = temp_file("copies.data");
  for (bool compress : {false, true}) {
    write_recording(path, compress, second_batch());
    const std::string good = read_bytes(path);
    struct Frames : Collected {
      std::vector<FrameInfo> frames;
      void on_frame(const FrameInfo& f) override { frames.push_back(f); }
    } all;
    const uint64_t frames = read_recording(path, all).frames;
    size_t damaged = 0;
    for (const FrameInfo& f : all.frames) {
      const std::string kind = f.kind;
      if (kind != "process" && kind != "kernel-symbols" && kind != "elf-symbols" && kind != "copy")
        continue;
      std::string bad = good;
      bad[f.offset + 16 + f.stored_size / 2] ^= 0x5a;
      write_bytes(path, bad);
      Collected c;
      ReadResult r = read_recording(path, c);
      SCOPED_TRACE(kind + " frame at byte " + std::to_string(f.offset));
      EXPECT_EQ(r.frames, frames - 1) << r.warning;
      EXPECT_NE(r.warning.find("1 damaged frame(s) skipped"), std::string::npos) << r.warning;
      EXPECT_EQ(c.processes, all.processes);
      if (kind == "kernel-symbols")
        EXPECT_TRUE(c.kernel_symbols.empty());
      else
        EXPECT_EQ(c.kernel_symbols, all.kernel_symbols);
      if (kind == "elf-symbols")
        EXPECT_TRUE(c.embedded.empty());
      else
        EXPECT_EQ(c.embedded, all.embedded);
      EXPECT_EQ(c.batches, all.batches);
      ++damaged;
    }
    EXPECT_EQ(damaged, 6u) << "2 maps frames and their copies, 2 symbol tables";
  }
}

// Since 1.10 a Process frame names the files its mappings map by id,
// each file defined once: in the frame that first maps it, or again in a
// frame written before that one's copy. Whichever process or copy frame
// is damaged, every process reads back as written.
TEST(Reader, MappedFilesNamedByIdSurviveDamageToAnyMapsFrame) {
  std::string path = temp_file("mapped-files.data");
  const Mapping libc{0x7f0000000000,       0x7f0000100000, 0x28000,
                     "/usr/lib/libc.so.6", "\xaa\xbb",     "libc.so.6.debug"};
  const Mapping ld{0x7f0000200000, 0x7f0000230000, 0x1000, "/usr/lib/ld-linux-x86-64.so.2", "\xcc"};
  auto process = [&](uint32_t pid, const std::string& exe) {
    return ProcessInfo{
        pid, exe, uint64_t{5'000'000'000} + pid, {Mapping{0x400000, 0x401000, 0, exe}, libc, ld}};
  };
  const std::vector<ProcessInfo> written = {process(1, "/usr/bin/a"), process(2, "/usr/bin/b"),
                                            process(3, "/usr/bin/a")};
  auto w = RecordingWriter::create(path, {.compress = false});
  w.write(make_info());
  w.write(written[0]);
  w.write(written[1]);  // before the first one's copy: defines libc and ld again
  w.write(first_batch());
  w.write(written[2]);  // after it: names all three files by id
  w.write(second_batch());
  w.write(RecordingEnd{7'000'000'000, {}});
  w.close();

  struct Frames : Collected {
    std::vector<FrameInfo> frames;
    void on_frame(const FrameInfo& f) override { frames.push_back(f); }
  } all;
  ASSERT_TRUE(read_recording(path, all).complete);
  ASSERT_EQ(all.processes, written);
  std::vector<FrameInfo> maps;
  for (const FrameInfo& f : all.frames)
    if (std::string(f.kind) == "process")
      maps.push_back(f);
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_LT(maps[2].raw_size, maps[1].raw_size) << "the third defines nothing";

  const std::string good = read_bytes(path);
  auto by_pid = [](std::vector<ProcessInfo> p) {
    std::sort(p.begin(), p.end(), [](auto& a, auto& b) { return a.pid < b.pid; });
    return p;
  };
  size_t damaged = 0;
  for (const FrameInfo& f : all.frames) {
    const std::string kind = f.kind;
    if (kind != "process" && kind != "copy")
      continue;
    std::string bad = good;
    bad[f.offset + 16 + f.stored_size / 2] ^= 0x5a;
    write_bytes(path, bad);
    Collected c;
    ReadResult r = read_recording(path, c);
    SCOPED_TRACE(kind + " frame at byte " + std::to_string(f.offset));
    EXPECT_EQ(r.damaged_frames, 1u) << r.warning;
    EXPECT_EQ(by_pid(c.processes), written);
    ++damaged;
  }
  EXPECT_EQ(damaged, 6u) << "3 maps frames and their copies";
}

// Losing a batch loses its stacks; later batches that refer to older
// stacks, or define their own, still read.
TEST(Reader, BatchesAfterASkippedBatchStillRead) {
  std::string path = temp_file("gap.data");
  write_recording(path, false, second_batch());
  std::string bytes = read_bytes(path);
  struct Offsets : Collected {
    std::vector<std::pair<std::string, uint64_t>> frames;
    void on_frame(const FrameInfo& f) override { frames.push_back({f.kind, f.offset}); }
  } offsets;
  read_recording(path, offsets);
  auto first_batch_at = std::find_if(offsets.frames.begin(), offsets.frames.end(),
                                     [](const auto& f) { return f.first == "samples"; });
  ASSERT_NE(first_batch_at, offsets.frames.end());
  bytes[first_batch_at->second + 40] ^= 0x01;
  write_bytes(path, bytes);
  Collected c;
  ReadResult r = read_recording(path, c);
  EXPECT_EQ(r.damaged_frames, 1u);
  ASSERT_EQ(c.batches.size(), 1u);
  EXPECT_EQ(c.batches[0].first_stack_id, 2u);  // ids 0 and 1 were lost with the first batch
  EXPECT_EQ(c.batches[0].samples.size(), 2u);
  EXPECT_TRUE(c.end);
}

TEST(Reader, SampleReferringToAnUndefinedStackIsDamage) {
  std::string path = temp_file("badid.data");
  SampleBatch bad = second_batch();
  bad.samples[0].stack_id = 99;
  write_recording(path, true, bad);
  Collected c;
  ReadResult r = read_recording(path, c);
  EXPECT_FALSE(r.complete);
  EXPECT_NE(r.warning.find("never defines"), std::string::npos) << r.warning;
  EXPECT_EQ(c.batches.size(), 1u);
}

TEST(Reader, SampleReferringToACgroupItsBatchDoesNotListIsDamage) {
  std::string path = temp_file("badcgroup.data");
  SampleBatch bad = second_batch();
  bad.cgroups = {{42, "/a"}};
  bad.samples[1].cgroup = 1;
  write_recording(path, true, bad);
  Collected c;
  ReadResult r = read_recording(path, c);
  EXPECT_FALSE(r.complete);
  EXPECT_NE(r.warning.find("refers to cgroup 1 that its batch does not list"), std::string::npos)
      << r.warning;
  EXPECT_EQ(c.batches.size(), 1u);
}

TEST(Reader, OversizedFieldsAreDamageNotAllocations) {
  std::string path = temp_file("deep.data");
  SampleBatch deep = second_batch();
  deep.stacks[0].user.assign(kMaxStackFrames + 1, 0x401000);
  write_recording(path, true, deep);
  Collected c;
  ReadResult r = read_recording(path, c);
  EXPECT_FALSE(r.complete);
  EXPECT_NE(r.warning.find("stack deeper than 127 frames"), std::string::npos) << r.warning;

  // One long module name shared by many symbols must not be copied per symbol.
  auto w = RecordingWriter::create(path);
  w.write(make_info());
  w.write(std::vector<KernelSymbol>{{0x1000, "f", std::string(kMaxModuleName + 1, 'm')}});
  w.close();
  Collected k;
  r = read_recording(path, k);
  EXPECT_NE(r.warning.find("kernel module name of 57 bytes"), std::string::npos) << r.warning;
  EXPECT_TRUE(k.kernel_symbols.empty());
}

// The 16-byte file header has no checksum: a flip in its version bytes is
// caught by the version the header frame repeats under its own (1.4).
TEST(Reader, AFlipInTheVersionBytesReadsFromTheHeaderFrame) {
  std::string path = temp_file("version-flip.data");
  write_recording(path, true, second_batch());
  const std::string good = read_bytes(path);
  for (size_t at : {8, 9, 10, 11}) {
    std::string bad = good;
    bad[at] ^= 0x40;
    write_bytes(path, bad);
    Collected c;
    ReadResult r = read_recording(path, c);
    EXPECT_EQ(r.version_major, kVersionMajor) << "byte " << at;
    EXPECT_EQ(r.version_minor, kVersionMinor) << "byte " << at;
    EXPECT_TRUE(c.end) << "byte " << at;
    EXPECT_NE(r.warning.find("the file header is damaged"), std::string::npos) << r.warning;
  }
}

// Found by the fuzzer: a zero-length frame with a valid checksum.
TEST(Reader, AnEmptyFrameIsDamage) {
  std::string path = temp_file("empty-frame.data");
  write_recording(path, false, second_batch());
  std::string bytes = read_bytes(path);
  uint8_t frame[16] = {};
  put_le16(&frame[8], static_cast<uint16_t>(FrameType::kProcess));
  put_le32(&frame[12], crc32c(0, frame, 12));
  write_bytes(path, bytes + std::string(reinterpret_cast<char*>(frame), sizeof frame));
  Collected c;
  ReadResult r = read_recording(path, c);
  EXPECT_EQ(r.damaged_frames, 1u);
  EXPECT_NE(r.warning.find("frame is empty"), std::string::npos) << r.warning;
  EXPECT_TRUE(c.end);
}

// A small frame claiming to inflate to far more than the writer ever packs
// into that many bytes is damage, found from its header alone: zeros
// compressed 8 KB to 64 MiB were inflated before anything looked at them.
TEST(Reader, AFrameThatInflatesBeyondWhatTheWriterMakesIsDamage) {
  std::string path = temp_file("bomb.data");
  write_recording(path, true, second_batch());
  const std::string zeros(64u << 20, '\0');
  std::string packed(ZSTD_compressBound(zeros.size()), '\0');
  packed.resize(ZSTD_compress(packed.data(), packed.size(), zeros.data(), zeros.size(), 19));
  ASSERT_LT(packed.size() * 1024, zeros.size()) << "compresses too little to test the bound";
  FrameHeader h{.stored_size = static_cast<uint32_t>(packed.size()),
                .raw_size = static_cast<uint32_t>(zeros.size()),
                .kind = static_cast<uint16_t>(FrameType::kSampleBatch),
                .flags = kFrameZstd};
  std::array<uint8_t, kFrameHeaderSize> header = encode_frame_header(h);
  h.crc = crc32c(crc32c(0, header.data(), 12), packed.data(), packed.size());
  header = encode_frame_header(h);
  write_bytes(path, read_bytes(path) + std::string(header.begin(), header.end()) + packed);
  Collected c;
  ReadResult r = read_recording(path, c);
  EXPECT_EQ(r.damaged_frames, 1u);
  EXPECT_NE(r.warning.find("frame header is damaged"), std::string::npos) << r.warning;
  EXPECT_TRUE(c.end) << "the frames before it read";
}

// Plausible headers by the thousand (each claiming half the file) stop
// the search for an intact frame at its budget: the warning says what was
// not read, rather than dropping the rest of the file silently.
TEST(Reader, ASearchThatStopsSaysWhatItDidNotRead) {
  std::string path = temp_file("plausible-headers.data");
  write_recording(path, true, second_batch());
  const std::string good = read_bytes(path);
  const size_t first_frame_end = kFileHeaderSize + kFrameHeaderSize +
                                 get_le32(reinterpret_cast<const uint8_t*>(good.data()) + 16);
  FrameHeader h{.stored_size = 64000,
                .raw_size = 64000,
                .kind = static_cast<uint16_t>(FrameType::kSampleBatch),
                .flags = 0,
                .crc = 0x12345678};
  const std::array<uint8_t, kFrameHeaderSize> header = encode_frame_header(h);
  std::string junk;
  for (int i = 0; i < 8192; ++i)
    junk.append(header.begin(), header.end());
  write_bytes(path, good.substr(0, first_frame_end) + junk + good.substr(first_frame_end));
  Collected c;
  ReadResult r = read_recording(path, c);
  EXPECT_FALSE(r.complete);
  EXPECT_NE(r.warning.find("stopped at its budget"), std::string::npos) << r.warning;
  EXPECT_NE(r.warning.find("bytes were not read"), std::string::npos) << r.warning;
}

TEST(Writer, UnwritablePathIsOneClearError) {
  try {
    RecordingWriter::create("/nonexistent-dir/x.data");
    FAIL() << "created a file in a missing directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create /nonexistent-dir/x.data"),
              std::string::npos);
  }
}

// Files name loss causes by text: each reads back as itself, and one a
// newer recorder wrote is kept as unknown rather than misread.
TEST(LossCause, NamesRoundTripAndUnknownOnesStayUnknown) {
  for (int i = 0; i + 1 < kLossCauses; ++i)
    EXPECT_EQ(parse_loss_cause(loss_cause_name(static_cast<LossCause>(i))),
              static_cast<LossCause>(i));
  EXPECT_EQ(parse_loss_cause("a cause from the future"), LossCause::kUnknown);
  EXPECT_TRUE(loss_keeps_sample(LossCause::kStackTruncated));
  EXPECT_FALSE(loss_keeps_sample(LossCause::kBufferFull));
}

}  // namespace
}  // namespace ebprof::format
