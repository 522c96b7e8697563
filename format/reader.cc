#include "format/reader.h"

#include <sys/stat.h>
#include <zstd.h>

#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "common/error.h"
#include "format/crc32c.h"
#include "format/ebprof.capnp.h"
#include "format/framing.h"

namespace ebprof::format {
namespace {

struct FileClose {
  void operator()(FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileClose>;

// A damaged frame: reading stops, what was read so far stays valid.
struct FrameDamage {
  std::string why;
};

std::string str(capnp::Text::Reader t) {
  return std::string(t.cStr(), t.size());
}

std::string bytes(capnp::Data::Reader d) {
  return std::string(d.asChars().begin(), d.size());
}

std::vector<std::string> strs(capnp::List<capnp::Text>::Reader list) {
  std::vector<std::string> out;
  out.reserve(list.size());
  for (auto t : list)
    out.push_back(str(t));
  return out;
}

RecordingInfo decode(schema::RecordingInfo::Reader r) {
  RecordingInfo info;
  info.writer_version = str(r.getWriterVersion());
  info.hostname = str(r.getHostname());
  info.kernel_release = str(r.getKernelRelease());
  info.machine = str(r.getMachine());
  info.command_line = strs(r.getCommandLine());
  info.event = str(r.getEvent());
  info.sample_frequency = r.getSampleFrequency();
  info.sample_period = r.getSamplePeriod();
  info.start_realtime_ns = r.getStartRealtimeNs();
  info.start_monotonic_ns = r.getStartMonotonicNs();
  info.cpu_count = r.getCpuCount();
  info.transport = str(r.getTransport());
  return info;
}

std::vector<KernelSymbol> decode(schema::KernelSymbols::Reader r) {
  auto addresses = r.getAddresses();
  auto names = r.getNames();
  auto module_index = r.getModuleIndex();
  auto sizes = r.getSizes();
  auto modules = strs(r.getModules());
  // Each symbol copies its module's name: a long one would multiply.
  for (const auto& m : modules)
    if (m.size() > kMaxModuleName)
      throw FrameDamage{"kernel module name of " + std::to_string(m.size()) + " bytes"};
  if (names.size() != addresses.size() || module_index.size() != addresses.size() ||
      sizes.size() != addresses.size())
    throw FrameDamage{"kernel symbol lists differ in length"};
  std::vector<KernelSymbol> out(addresses.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (module_index[i] >= modules.size())
      throw FrameDamage{"kernel symbol refers to module " + std::to_string(module_index[i]) +
                        " of " + std::to_string(modules.size())};
    out[i] = KernelSymbol{addresses[i], str(names[i]), modules[module_index[i]], sizes[i]};
  }
  return out;
}

ProcessInfo decode(schema::Process::Reader r) {
  ProcessInfo p;
  p.pid = r.getPid();
  p.comm = str(r.getComm());
  p.captured_at_ns = r.getCapturedAtNs();
  for (auto m : r.getMappings()) {
    auto build_id = m.getBuildId();
    if (build_id.size() > kMaxBuildId)
      throw FrameDamage{"build-id of " + std::to_string(build_id.size()) + " bytes"};
    p.mappings.push_back(Mapping{m.getStart(), m.getEnd(), m.getFileOffset(), str(m.getPath()),
                                 bytes(build_id), str(m.getDebuglink())});
  }
  p.maps_error = str(r.getMapsError());
  return p;
}

template <typename T>
std::vector<T> values(typename capnp::List<T>::Reader list) {
  std::vector<T> out;
  out.reserve(list.size());
  for (T v : list)
    out.push_back(v);
  return out;
}

// Tracks how many stacks and comms the file has defined so far, so that ids
// in later batches can be checked against them.
struct IdSpace {
  uint64_t stacks = 0;
  uint64_t comms = 0;
};

SampleBatch decode(schema::SampleBatch::Reader r, IdSpace& ids) {
  SampleBatch batch;
  batch.first_stack_id = r.getFirstStackId();
  batch.first_comm_id = r.getFirstCommId();
  if (batch.first_stack_id != ids.stacks || batch.first_comm_id != ids.comms)
    throw FrameDamage{"batch starts at stack " + std::to_string(batch.first_stack_id) + ", comm " +
                      std::to_string(batch.first_comm_id) + " but " + std::to_string(ids.stacks) +
                      " stacks and " + std::to_string(ids.comms) +
                      " comms precede it (a frame is missing)"};
  for (auto s : r.getStacks()) {
    if (s.getKernel().size() > kMaxStackFrames || s.getUser().size() > kMaxStackFrames)
      throw FrameDamage{"stack deeper than " + std::to_string(kMaxStackFrames) + " frames"};
    batch.stacks.push_back(Stack{values<uint64_t>(s.getKernel()), values<uint64_t>(s.getUser())});
  }
  batch.comms = strs(r.getComms());
  ids.stacks += batch.stacks.size();
  ids.comms += batch.comms.size();

  auto delta = r.getTimeDeltaNs();
  auto pid = r.getPid();
  auto tid = r.getTid();
  auto cpu = r.getCpu();
  auto stack_id = r.getStackId();
  auto comm_id = r.getCommId();
  const size_t n = delta.size();
  if (pid.size() != n || tid.size() != n || cpu.size() != n || stack_id.size() != n ||
      comm_id.size() != n)
    throw FrameDamage{"sample columns differ in length"};
  batch.samples.resize(n);
  uint64_t time = r.getBaseTimeNs();
  for (size_t i = 0; i < n; ++i) {
    if (stack_id[i] >= ids.stacks || comm_id[i] >= ids.comms)
      throw FrameDamage{"sample " + std::to_string(i) + " refers to stack " +
                        std::to_string(stack_id[i]) + " or comm " + std::to_string(comm_id[i]) +
                        " that the file never defines"};
    time += static_cast<uint64_t>(delta[i]);
    batch.samples[i] = Sample{time, pid[i], tid[i], cpu[i], stack_id[i], comm_id[i]};
  }
  return batch;
}

EmbeddedSymbols decode(schema::ElfSymbols::Reader r) {
  EmbeddedSymbols e;
  if (r.getBuildId().size() == 0 || r.getBuildId().size() > kMaxBuildId)
    throw FrameDamage{"embedded symbols with a build-id of " +
                      std::to_string(r.getBuildId().size()) + " bytes"};
  e.build_id = bytes(r.getBuildId());
  e.path = str(r.getPath());
  for (auto s : r.getSegments())
    e.segments.push_back({s.getOffset(), s.getVaddr(), s.getFileSize()});
  auto addresses = r.getAddresses();
  auto sizes = r.getSizes();
  auto names = r.getNames();
  if (sizes.size() != addresses.size() || names.size() != addresses.size())
    throw FrameDamage{"embedded symbol lists differ in length"};
  e.symbols.reserve(addresses.size());
  for (size_t i = 0; i < addresses.size(); ++i)
    e.symbols.push_back({addresses[i], sizes[i], str(names[i])});
  return e;
}

RecordingEnd decode(schema::RecordingEnd::Reader r) {
  RecordingEnd end;
  end.end_monotonic_ns = r.getEndMonotonicNs();
  auto causes = r.getLossCauses();
  auto counts = r.getLossCounts();
  if (causes.size() != counts.size())
    throw FrameDamage{"loss lists differ in length"};
  for (size_t i = 0; i < causes.size(); ++i)
    end.losses.push_back({str(causes[i]), counts[i]});
  return end;
}

// Reads exactly `size` bytes; returns how many were there before EOF.
size_t read_up_to(FILE* f, void* out, size_t size, const std::string& path) {
  size_t n = std::fread(out, 1, size, f);
  if (n < size && std::ferror(f))
    throw_errno("reading " + path, errno);
  return n;
}

const char* kind_name(uint16_t kind) {
  switch (static_cast<FrameKind>(kind)) {
    case FrameKind::kRecordingInfo:
      return "header";
    case FrameKind::kKernelSymbols:
      return "kernel-symbols";
    case FrameKind::kProcess:
      return "process";
    case FrameKind::kSampleBatch:
      return "samples";
    case FrameKind::kRecordingEnd:
      return "end";
    case FrameKind::kElfSymbols:
      return "elf-symbols";
  }
  return "unknown";
}

// Returns the file's (major, minor) version.
std::pair<uint16_t, uint16_t> check_file_header(FILE* f, const std::string& path) {
  std::array<uint8_t, kFileHeaderSize> h{};
  size_t n = read_up_to(f, h.data(), h.size(), path);
  if (n == 0)
    throw Error(path + " is empty: not an ebprof recording (did ebprof-record fail to start?)");
  if (n < kMagic.size() || !std::equal(kMagic.begin(), kMagic.end(), h.begin()))
    throw Error(path + " is not an ebprof recording (no ebprof magic at its start)");
  if (n < h.size())
    throw Error(path + " is truncated inside its 16-byte file header");
  uint16_t major = get_le16(&h[8]);
  uint16_t minor = get_le16(&h[10]);
  if (major > kVersionMajor)
    throw Error(path + " has format version " + std::to_string(major) + "." +
                std::to_string(minor) + ", newer than this ebprof-report reads (" +
                std::to_string(kVersionMajor) + ".x): upgrade ebprof");
  if (major == 0)
    throw Error(path + " has format version 0, which never existed: file is damaged");
  return {major, minor};
}

}  // namespace

ReadResult read_recording(const std::string& path, RecordingVisitor& visitor) {
  File f(std::fopen(path.c_str(), "rbe"));
  if (!f)
    throw Error(errno_message("cannot open " + path, errno));
  auto [major, minor] = check_file_header(f.get(), path);
  struct stat st {};
  if (fstat(fileno(f.get()), &st) != 0)
    throw_errno("reading " + path, errno);
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);

  ReadResult result;
  result.version_major = major;
  result.version_minor = minor;
  IdSpace ids;
  uint64_t offset = kFileHeaderSize;
  std::vector<uint8_t> stored;
  std::vector<capnp::word> raw;
  auto stop = [&](const std::string& why) {
    result.complete = false;
    result.warning = path + ": " + why + " at byte " + std::to_string(offset) + " (frame " +
                     std::to_string(result.frames + 1) + "); the report covers the " +
                     std::to_string(result.frames) + " frames before it";
  };

  while (true) {
    std::array<uint8_t, kFrameHeaderSize> hb{};
    size_t n = read_up_to(f.get(), hb.data(), hb.size(), path);
    if (n == 0)
      break;
    if (n < hb.size()) {
      stop("file ends inside a frame header (recording cut short)");
      break;
    }
    FrameHeader h = decode_frame_header(hb.data());
    bool compressed = h.flags & kFrameZstd;
    if (h.stored_size > kMaxFrameBytes || h.raw_size > kMaxFrameBytes || h.raw_size % 8 != 0 ||
        (!compressed && h.stored_size != h.raw_size) || (h.flags & ~kFrameZstd)) {
      stop("frame header is damaged");
      break;
    }
    // Never allocate for bytes the file does not have.
    if (offset + kFrameHeaderSize + h.stored_size > file_size) {
      stop("file ends inside a frame (recording cut short)");
      break;
    }
    stored.resize(h.stored_size);
    if (read_up_to(f.get(), stored.data(), stored.size(), path) < stored.size()) {
      stop("file ends inside a frame (recording cut short)");
      break;
    }
    if (crc32c(crc32c(0, hb.data(), 12), stored.data(), stored.size()) != h.crc) {
      stop("frame checksum mismatch (damaged data)");
      break;
    }
    if (compressed && ZSTD_getFrameContentSize(stored.data(), stored.size()) != h.raw_size) {
      stop("frame does not decompress (damaged data)");
      break;
    }
    raw.resize(h.raw_size / sizeof(capnp::word));
    if (compressed) {
      size_t got = ZSTD_decompress(raw.data(), h.raw_size, stored.data(), stored.size());
      if (ZSTD_isError(got) || got != h.raw_size) {
        stop("frame does not decompress (damaged data)");
        break;
      }
    } else {
      std::memcpy(raw.data(), stored.data(), stored.size());
    }

    try {
      capnp::ReaderOptions options;
      // Bound the work a message can cause to a small multiple of its size.
      options.traversalLimitInWords = raw.size() * 4 + 1024;
      options.nestingLimit = 16;
      capnp::FlatArrayMessageReader message(kj::arrayPtr(raw.data(), raw.size()), options);
      if (result.frames == 0 && h.kind != static_cast<uint16_t>(FrameKind::kRecordingInfo))
        throw Error(path + " has no recording header frame: file is damaged");
      visitor.on_frame(FrameInfo{result.frames, offset, kind_name(h.kind), h.stored_size,
                                 h.raw_size, compressed});
      switch (static_cast<FrameKind>(h.kind)) {
        case FrameKind::kRecordingInfo:
          visitor.on_info(decode(message.getRoot<schema::RecordingInfo>()));
          break;
        case FrameKind::kKernelSymbols:
          visitor.on_kernel_symbols(decode(message.getRoot<schema::KernelSymbols>()));
          break;
        case FrameKind::kProcess:
          visitor.on_process(decode(message.getRoot<schema::Process>()));
          break;
        case FrameKind::kSampleBatch:
          visitor.on_samples(decode(message.getRoot<schema::SampleBatch>(), ids));
          break;
        case FrameKind::kElfSymbols:
          visitor.on_elf_symbols(decode(message.getRoot<schema::ElfSymbols>()));
          break;
        case FrameKind::kRecordingEnd:
          visitor.on_end(decode(message.getRoot<schema::RecordingEnd>()));
          break;
        default:
          break;  // a kind from a newer minor version: skip it
      }
    } catch (const FrameDamage& d) {
      stop("frame is damaged: " + d.why);
      break;
    } catch (const kj::Exception& e) {
      stop("frame is damaged: " + std::string(e.getDescription().cStr()));
      break;
    }
    ++result.frames;
    offset += kFrameHeaderSize + h.stored_size;
  }
  if (result.frames == 0)
    throw Error(path + " holds no complete frame: recording is unusable");
  return result;
}

}  // namespace ebprof::format
