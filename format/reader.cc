#include "format/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "common/error.h"
#include "common/unique_fd.h"
#include "format/crc32c.h"
#include "format/ebprof.capnp.h"
#include "format/framing.h"

namespace ebprof::format {
namespace {

// A damaged frame: it is skipped, what was read before it stays valid.
struct FrameDamage {
  std::string why;
};

std::string str(capnp::Text::Reader t) {
  return std::string(t.cStr(), t.size());
}

std::string bytes(capnp::Data::Reader d) {
  return std::string(d.asChars().begin(), d.size());
}

template <typename T>
std::vector<T> values(typename capnp::List<T>::Reader list) {
  std::vector<T> out;
  out.reserve(list.size());
  for (T v : list)
    out.push_back(v);
  return out;
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
  if (r.getKernelBuildId().size() > kMaxBuildId)
    throw FrameDamage{"kernel build-id of " + std::to_string(r.getKernelBuildId().size()) +
                      " bytes"};
  info.kernel_build_id = bytes(r.getKernelBuildId());
  for (auto m : r.getKernelModules()) {
    if (m.getBuildId().size() > kMaxBuildId)
      throw FrameDamage{"module build-id of " + std::to_string(m.getBuildId().size()) + " bytes"};
    info.kernel_modules.push_back(
        {str(m.getName()), m.getStart(), m.getEnd(), bytes(m.getBuildId())});
  }
  info.kernel_addresses_hidden = r.getKernelAddressesHidden();
  info.off_cpu = r.getOffCpu();
  info.off_cpu_min_block_ns = r.getOffCpuMinBlockNs();
  info.off_cpu_max_block_ns = r.getOffCpuMaxBlockNs();
  info.off_cpu_states = r.getOffCpuStates();
  info.sampling = r.getSampling();
  info.call_graph = r.getCallGraph() == 1 ? CallGraph::kDwarf : CallGraph::kFramePointer;
  info.user_stack_bytes = r.getUserStackBytes();
  info.user_registers = values<uint16_t>(r.getUserRegisters());
  info.stack_block_bytes = r.getStackBlockBytes();
  info.window_reach = r.getWindowReach();
  if (info.user_registers.size() > kMaxUserRegisters ||
      (info.stack_block_bytes && (info.stack_block_bytes < 8 || info.stack_block_bytes > 4096 ||
                                  (info.stack_block_bytes & (info.stack_block_bytes - 1)))))
    throw FrameDamage{"user stack window settings out of range"};
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
  p.place = {r.getPidNamespace(), r.getMountNamespace(), r.getNamespacePid(), str(r.getRoot())};
  return p;
}

// Tracks how many stacks and comms the file has defined so far, so that ids
// in later batches can be checked against them.
struct IdSpace {
  uint64_t stacks = 0;
  uint64_t comms = 0;
  uint64_t blocks = 0;
  uint64_t windows = 0;
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
    stacks = comms = blocks = windows = 0;
  }
};

// After a damaged frame was skipped (`allow_gaps`), a batch may start past
// the ids defined so far: the ids in between were lost with that frame.
// A batch's first ids must follow what the file defined so far; after a
// damaged frame was skipped (`allow_gaps`), they may jump past it.
void check_first_ids(schema::SampleBatch::Reader r, IdSpace& ids, bool allow_gaps) {
  const uint64_t stack = r.getFirstStackId(), comm = r.getFirstCommId();
  const uint64_t block = r.getFirstBlockId(), window = r.getFirstWindowId();
  if (allow_gaps && stack >= ids.stacks && comm >= ids.comms && block >= ids.blocks &&
      window >= ids.windows) {
    ids.stacks = stack;
    ids.comms = comm;
    ids.blocks = block;
    ids.windows = window;
  }
  if (stack != ids.stacks || comm != ids.comms || block != ids.blocks || window != ids.windows)
    throw FrameDamage{"batch starts at stack " + std::to_string(stack) + ", comm " +
                      std::to_string(comm) + " but " + std::to_string(ids.stacks) + " stacks and " +
                      std::to_string(ids.comms) + " comms precede it (a frame is missing)"};
}

// Stack blocks and the windows made of them (--call-graph dwarf).
void decode_windows(schema::SampleBatch::Reader r, IdSpace& ids, SampleBatch& batch) {
  batch.first_block_id = r.getFirstBlockId();
  batch.first_window_id = r.getFirstWindowId();
  batch.blocks = bytes(r.getBlockData());
  if (!batch.blocks.empty() && (ids.block_bytes == 0 || batch.blocks.size() % ids.block_bytes))
    throw FrameDamage{"stack blocks of " + std::to_string(batch.blocks.size()) +
                      " bytes, in blocks of " + std::to_string(ids.block_bytes)};
  ids.blocks += ids.block_bytes ? batch.blocks.size() / ids.block_bytes : 0;
  for (auto w : r.getWindows()) {
    const uint32_t size = w.getSize();
    const uint64_t base = w.getBase();
    if (ids.block_bytes == 0 || size == 0 || size > kMaxUserStackBytes || base + size < base ||
        w.getRegs().size() != ids.user_registers)
      throw FrameDamage{"user stack window does not add up"};
    // The blocks from base's up to the one holding the last byte.
    const uint64_t first = base / ids.block_bytes, last = (base + size - 1) / ids.block_bytes;
    if (w.getBlocks().size() != last - first + 1)
      throw FrameDamage{"user stack window does not add up"};
    UserWindow window{values<uint64_t>(w.getRegs()), base, size,
                      w.getAbi() <= 2 ? static_cast<UserAbi>(w.getAbi()) : UserAbi::kUnknown,
                      values<uint32_t>(w.getBlocks())};
    for (uint32_t id : window.blocks)
      if (id >= ids.blocks)
        throw FrameDamage{"user stack window refers to block " + std::to_string(id) +
                          " that the file never defines"};
    batch.windows.push_back(std::move(window));
  }
  ids.windows += batch.windows.size();
  auto window_id = r.getWindowId();
  if (window_id.size() == 0)
    return;
  if (window_id.size() != batch.samples.size())
    throw FrameDamage{"window column differs in length from the samples"};
  for (size_t i = 0; i < batch.samples.size(); ++i) {
    if (window_id[i] != kNoWindow && window_id[i] >= ids.windows)
      throw FrameDamage{"sample " + std::to_string(i) + " refers to window " +
                        std::to_string(window_id[i]) + " that the file never defines"};
    batch.samples[i].window_id = window_id[i];
  }
}

void decode_samples(schema::SampleBatch::Reader r, const IdSpace& ids, SampleBatch& batch) {
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
}

void decode_off_cpu(schema::SampleBatch::Reader r, const IdSpace& ids, SampleBatch& batch) {
  const size_t n = batch.samples.size();
  auto blocked = r.getBlockedNs();
  auto state = r.getBlockState();
  if (blocked.size() != 0 || state.size() != 0) {
    if (blocked.size() != n || state.size() != n)
      throw FrameDamage{"off-CPU columns differ in length from the samples"};
    for (size_t i = 0; i < n; ++i) {
      batch.samples[i].blocked_ns = blocked[i];
      // A state a newer minor version added reads as "other".
      batch.samples[i].state =
          state[i] < kBlockStates ? static_cast<BlockState>(state[i]) : BlockState::kOther;
    }
  }
  auto waker_stack = r.getWakerStackId();
  auto waker_pid = r.getWakerPid();
  auto waker_tid = r.getWakerTid();
  auto waker_comm = r.getWakerCommId();
  if (!waker_stack.size() && !waker_pid.size() && !waker_tid.size() && !waker_comm.size())
    return;
  if (waker_stack.size() != n || waker_pid.size() != n || waker_tid.size() != n ||
      waker_comm.size() != n)
    throw FrameDamage{"waker columns differ in length from the samples"};
  for (size_t i = 0; i < n; ++i) {
    if (waker_stack[i] == kNoWaker)
      continue;
    if (waker_stack[i] >= ids.stacks || waker_comm[i] >= ids.comms)
      throw FrameDamage{"sample " + std::to_string(i) + "'s waker refers to stack " +
                        std::to_string(waker_stack[i]) + " or comm " +
                        std::to_string(waker_comm[i]) + " that the file never defines"};
    batch.samples[i].waker_stack_id = waker_stack[i];
    batch.samples[i].waker_pid = waker_pid[i];
    batch.samples[i].waker_tid = waker_tid[i];
    batch.samples[i].waker_comm_id = waker_comm[i];
  }
}

void decode_cgroups(schema::SampleBatch::Reader r, SampleBatch& batch) {
  for (auto c : r.getCgroups())
    batch.cgroups.push_back(Cgroup{c.getId(), str(c.getPath())});
  auto cgroup = r.getCgroup();
  if (cgroup.size() == 0)
    return;
  if (cgroup.size() != batch.samples.size())
    throw FrameDamage{"cgroup column differs in length from the samples"};
  for (size_t i = 0; i < batch.samples.size(); ++i) {
    if (cgroup[i] != kNoCgroup && cgroup[i] >= batch.cgroups.size())
      throw FrameDamage{"sample " + std::to_string(i) + " refers to cgroup " +
                        std::to_string(cgroup[i]) + " that its batch does not list"};
    batch.samples[i].cgroup = cgroup[i];
  }
}

SampleBatch decode(schema::SampleBatch::Reader r, IdSpace& ids, bool allow_gaps) {
  check_first_ids(r, ids, allow_gaps);
  SampleBatch batch;
  batch.first_stack_id = r.getFirstStackId();
  batch.first_comm_id = r.getFirstCommId();
  for (auto s : r.getStacks()) {
    if (s.getKernel().size() > kMaxStackFrames || s.getUser().size() > kMaxStackFrames)
      throw FrameDamage{"stack deeper than " + std::to_string(kMaxStackFrames) + " frames"};
    batch.stacks.push_back(Stack{values<uint64_t>(s.getKernel()), values<uint64_t>(s.getUser())});
  }
  batch.comms = strs(r.getComms());
  ids.stacks += batch.stacks.size();
  ids.comms += batch.comms.size();
  decode_samples(r, ids, batch);
  decode_off_cpu(r, ids, batch);
  decode_windows(r, ids, batch);
  decode_cgroups(r, batch);
  return batch;
}

// The parallel address/size/name lists of ElfSymbols and JitSymbols.
template <typename Reader>
std::vector<ElfSymbol> symbols_of(Reader r, const char* what) {
  auto addresses = r.getAddresses();
  auto sizes = r.getSizes();
  auto names = r.getNames();
  if (sizes.size() != addresses.size() || names.size() != addresses.size())
    throw FrameDamage{std::string(what) + " symbol lists differ in length"};
  std::vector<ElfSymbol> symbols;
  symbols.reserve(addresses.size());
  for (size_t i = 0; i < addresses.size(); ++i)
    symbols.push_back({addresses[i], sizes[i], str(names[i])});
  return symbols;
}

// The PT_LOAD headers of ElfSymbols and ElfCfi.
template <typename Reader>
std::vector<LoadSegment> segments_of(Reader r) {
  if (r.getSegments().size() > kMaxLoadSegments)
    throw FrameDamage{std::to_string(r.getSegments().size()) + " load segments"};
  std::vector<LoadSegment> segments;
  for (auto s : r.getSegments())
    segments.push_back({s.getOffset(), s.getVaddr(), s.getFileSize()});
  return segments;
}

EmbeddedSymbols decode(schema::ElfSymbols::Reader r) {
  EmbeddedSymbols e;
  if (r.getBuildId().size() == 0 || r.getBuildId().size() > kMaxBuildId)
    throw FrameDamage{"embedded symbols with a build-id of " +
                      std::to_string(r.getBuildId().size()) + " bytes"};
  e.build_id = bytes(r.getBuildId());
  e.path = str(r.getPath());
  e.segments = segments_of(r);
  e.symbols = symbols_of(r, "embedded");
  return e;
}

RecordingEnd decode(schema::RecordingEnd::Reader r) {
  RecordingEnd end;
  end.end_monotonic_ns = r.getEndMonotonicNs();
  end.task_events_lost = r.getTaskEventsLost();
  auto causes = r.getLossCauses();
  auto counts = r.getLossCounts();
  auto kept = r.getLossSampleKept();  // absent in 1.0 files
  if (causes.size() != counts.size() || (kept.size() != 0 && kept.size() != causes.size()))
    throw FrameDamage{"loss lists differ in length"};
  for (size_t i = 0; i < causes.size(); ++i) {
    const LossCause cause = parse_loss_cause(str(causes[i]));
    end.losses.push_back({cause, counts[i], kept.size() != 0 ? kept[i] : loss_keeps_sample(cause)});
  }
  return end;
}

JitSymbols decode(schema::JitSymbols::Reader r) {
  JitSymbols j;
  j.pid = r.getPid();
  j.symbols = symbols_of(r, "JIT");
  return j;
}

ElfCfi decode(schema::ElfCfi::Reader r) {
  ElfCfi c;
  c.build_id = bytes(r.getBuildId());
  if (c.build_id.size() > kMaxBuildId)
    throw FrameDamage{"build-id of " + std::to_string(c.build_id.size()) + " bytes"};
  c.path = str(r.getPath());
  c.segments = segments_of(r);
  c.eh_frame_hdr_address = r.getEhFrameHdrAddress();
  c.eh_frame_hdr = bytes(r.getEhFrameHdr());
  c.eh_frame_address = r.getEhFrameAddress();
  c.eh_frame = bytes(r.getEhFrame());
  return c;
}

Source decode(schema::Source::Reader r) {
  return Source{r.getIndex(), r.getPath(), r.getVersionMajor(), r.getVersionMinor()};
}

Losses decode(schema::Losses::Reader r) {
  Losses l;
  l.time_ns = r.getTimeNs();
  auto cpus = r.getCpus();
  auto causes = r.getCauses();
  auto counts = r.getCounts();
  auto kept = r.getSampleKept();
  if (causes.size() != cpus.size() || counts.size() != cpus.size() || kept.size() != cpus.size())
    throw FrameDamage{"loss lists differ in length"};
  for (size_t i = 0; i < cpus.size(); ++i)
    l.counts.push_back({parse_loss_cause(str(causes[i])), counts[i], kept[i], cpus[i]});
  return l;
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
    case FrameKind::kLosses:
      return "losses";
    case FrameKind::kJitSymbols:
      return "jit-symbols";
    case FrameKind::kElfCfi:
      return "elf-cfi";
    case FrameKind::kSource:
      return "source";
    case FrameKind::kMergeEnd:
      return "merge-end";
    case FrameKind::kCopy:
      return "copy";
  }
  return "unknown";
}

size_t read_at(int fd, uint64_t offset, void* out, size_t size, const std::string& path);

std::optional<std::pair<uint16_t, uint16_t>> version_in_header_frame(int fd, uint64_t file_size,
                                                                     const std::string& path);

// Returns the file's (major, minor) version. Where the header frame repeats
// it (1.4) under a checksum that holds and says otherwise, the frame is
// right: the file header has no checksum, and one flipped bit there read
// as "newer version"; `repaired` then says so.
std::pair<uint16_t, uint16_t> check_file_header(int fd, uint64_t file_size, const std::string& path,
                                                std::string* repaired = nullptr) {
  std::array<uint8_t, kFileHeaderSize> h{};
  size_t n = read_at(fd, 0, h.data(), h.size(), path);
  if (n == 0)
    throw Error(path + " is empty: not an ebprof recording (did ebprof-record fail to start?)");
  if (n < kMagic.size() || !std::equal(kMagic.begin(), kMagic.end(), h.begin()))
    throw Error(path + " is not an ebprof recording (no ebprof magic at its start)");
  if (n < h.size())
    throw Error(path + " is truncated inside its 16-byte file header");
  uint16_t major = get_le16(&h[8]);
  uint16_t minor = get_le16(&h[10]);
  if (const auto framed = version_in_header_frame(fd, file_size, path);
      framed && framed->first >= 1 && framed->first <= kNewestMajor &&
      *framed != std::pair{major, minor}) {
    if (repaired)
      *repaired = path + ": its file header says version " + std::to_string(major) + "." +
                  std::to_string(minor) + ", its checksummed header frame " +
                  std::to_string(framed->first) + "." + std::to_string(framed->second) +
                  ": read as the latter (the file header is damaged)";
    return *framed;
  }
  if (major > kNewestMajor)
    throw Error(path + " has format version " + std::to_string(major) + "." +
                std::to_string(minor) + ", newer than this ebprof-report reads (up to " +
                std::to_string(kNewestMajor) + ".x): upgrade ebprof");
  if (major == 0)
    throw Error(path + " has format version 0, which never existed: file is damaged");
  return {major, minor};
}

// The version of the file header at `offset`, when one is there: the start
// of another recording joined on after this one.
std::optional<std::pair<uint16_t, uint16_t>> joined_file_header(int fd, uint64_t offset,
                                                                uint64_t file_size,
                                                                const std::string& path);

// The Cap'n Proto message of a frame's unpacked bytes, the work it can
// cause bounded to a small multiple of its size.
capnp::FlatArrayMessageReader message_of(const std::vector<uint64_t>& raw) {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = raw.size() * 4 + 1024;
  options.nestingLimit = 16;
  return capnp::FlatArrayMessageReader(
      kj::arrayPtr(reinterpret_cast<const capnp::word*>(raw.data()), raw.size()), options);
}

// A frame's message bytes into `raw`: decompressed, or copied. Returns why
// the frame is damaged, or "".
std::string unpack(const FrameHeader& h, const std::vector<uint8_t>& stored,
                   std::vector<uint64_t>& raw, ZSTD_DCtx* zstd) {
  bool compressed = h.flags & kFrameZstd;
  if (compressed && ZSTD_getFrameContentSize(stored.data(), stored.size()) != h.raw_size)
    return "frame does not decompress";
  // Cap'n Proto needs at least the segment table: an empty frame is damage
  // (and memcpy from an empty vector's null data() would be undefined).
  if (h.raw_size == 0)
    return "frame is empty";
  raw.resize(h.raw_size / sizeof(uint64_t));
  if (compressed) {
    size_t got = ZSTD_decompressDCtx(zstd, raw.data(), h.raw_size, stored.data(), stored.size());
    if (ZSTD_isError(got) || got != h.raw_size)
      return "frame does not decompress";
  } else {
    std::memcpy(raw.data(), stored.data(), stored.size());
  }
  return "";
}

// Hands one decoded frame to the visitor, under its source.
struct Delivery {
  RecordingVisitor& visitor;
  const FrameInfo& info;
  IdSpace& ids;
  uint16_t kind;

  template <typename Value, typename Callback>
  void operator()(Value&& value, Callback callback) {
    FrameInfo placed = info;
    placed.source = ids.source;
    visitor.on_frame(placed);
    (visitor.*callback)(std::move(value));
    ids.source_has_content |= kind != static_cast<uint16_t>(FrameKind::kSource);
  }
};

// Decodes the message of a frame by its kind and delivers it. Throws
// FrameDamage or kj::Exception for a damaged message.
void dispatch(capnp::MessageReader& message, bool allow_gaps, Delivery& deliver) {
  IdSpace& ids = deliver.ids;
  switch (static_cast<FrameKind>(deliver.kind)) {
    case FrameKind::kRecordingInfo: {
      const schema::RecordingInfo::Reader root = message.getRoot<schema::RecordingInfo>();
      // The header's copy (1.4) stands in for a damaged header, and is
      // passed over otherwise.
      if (root.getCopy() && ids.has_info) {
        FrameInfo placed = deliver.info;
        placed.source = ids.source;
        placed.kind = "header-copy";
        return deliver.visitor.on_frame(placed);
      }
      RecordingInfo decoded = decode(root);
      // After content, a header starts a new source: in a merged file, one
      // whose Source frame was lost; in any file, a recording joined on.
      if (!root.getCopy() && ids.source_has_content)
        ids.start_source();
      ids.has_info = true;
      ids.block_bytes = decoded.stack_block_bytes;
      ids.user_registers = decoded.user_registers.size();
      return deliver(std::move(decoded), &RecordingVisitor::on_info);
    }
    case FrameKind::kKernelSymbols:
      return deliver(decode(message.getRoot<schema::KernelSymbols>()),
                     &RecordingVisitor::on_kernel_symbols);
    case FrameKind::kProcess:
      return deliver(decode(message.getRoot<schema::Process>()), &RecordingVisitor::on_process);
    case FrameKind::kSampleBatch: {
      IdSpace after = ids;  // committed only if the whole batch decodes
      SampleBatch batch = decode(message.getRoot<schema::SampleBatch>(), after, allow_gaps);
      ids = after;
      return deliver(std::move(batch), &RecordingVisitor::on_samples);
    }
    case FrameKind::kElfSymbols:
      return deliver(decode(message.getRoot<schema::ElfSymbols>()),
                     &RecordingVisitor::on_elf_symbols);
    case FrameKind::kRecordingEnd:
      return deliver(decode(message.getRoot<schema::RecordingEnd>()), &RecordingVisitor::on_end);
    case FrameKind::kLosses:
      return deliver(decode(message.getRoot<schema::Losses>()), &RecordingVisitor::on_losses);
    case FrameKind::kJitSymbols:
      return deliver(decode(message.getRoot<schema::JitSymbols>()),
                     &RecordingVisitor::on_jit_symbols);
    case FrameKind::kElfCfi:
      return deliver(decode(message.getRoot<schema::ElfCfi>()), &RecordingVisitor::on_elf_cfi);
    case FrameKind::kSource: {
      // Decoded before anything moves: a damaged one changes nothing.
      Source decoded = decode(message.getRoot<schema::Source>());
      ids.start_source();
      return deliver(std::move(decoded), &RecordingVisitor::on_source);
    }
    case FrameKind::kCopy:
      break;  // opened by the reading loop (open_copy), never dispatched
    case FrameKind::kMergeEnd: {
      // The reader's own: visitors see the frame, not its content.
      ids.merge_end = message.getRoot<schema::MergeEnd>().getSources();
      FrameInfo placed = deliver.info;
      placed.source = ids.source;
      return deliver.visitor.on_frame(placed);
    }
  }
  deliver.visitor.on_frame(deliver.info);  // a kind from a newer minor version: skip it
}

// Decompresses and decodes one checked frame and hands it to the visitor.
// Returns why the frame is damaged, or "" when it was delivered. Nothing
// reaches the visitor from a damaged frame.
std::string decode_frame(const FrameHeader& h, const std::vector<uint8_t>& stored,
                         std::vector<uint64_t>& raw, ZSTD_DCtx* zstd, IdSpace& ids, bool allow_gaps,
                         RecordingVisitor& visitor, const FrameInfo& info,
                         const std::string& path) {
  if (std::string damage = unpack(h, stored, raw, zstd); !damage.empty())
    return damage;
  if (info.index == 0 && h.kind != static_cast<uint16_t>(FrameKind::kRecordingInfo) &&
      h.kind != static_cast<uint16_t>(FrameKind::kSource))
    throw Error(path + " has no recording header frame: file is damaged");
  try {
    capnp::FlatArrayMessageReader message = message_of(raw);
    Delivery deliver{visitor, info, ids, h.kind};
    dispatch(message, allow_gaps, deliver);
  } catch (const FrameDamage& d) {
    return "frame is damaged: " + d.why;
  } catch (const kj::Exception& e) {
    return "frame is damaged: " + std::string(e.getDescription().cStr());
  }
  return "";
}

}  // namespace

namespace {

// Reads exactly `size` bytes at `offset` unless the file ends first; returns
// how many were read.
size_t read_at(int fd, uint64_t offset, void* out, size_t size, const std::string& path) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(fd, static_cast<uint8_t*>(out) + done, size - done, offset + done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw_errno("reading " + path, errno);
    if (n == 0)
      break;
    done += n;
  }
  return done;
}

std::optional<std::pair<uint16_t, uint16_t>> joined_file_header(int fd, uint64_t offset,
                                                                uint64_t file_size,
                                                                const std::string& path) {
  std::array<uint8_t, kFileHeaderSize> h{};
  if (offset + h.size() > file_size || read_at(fd, offset, h.data(), h.size(), path) < h.size() ||
      !std::equal(kMagic.begin(), kMagic.end(), h.begin()))
    return std::nullopt;
  return std::pair{get_le16(&h[8]), get_le16(&h[10])};
}

// Whether a frame header's fields are self-consistent, and (with `fits`)
// whether its payload fits in the file.
bool plausible(const FrameHeader& h, uint64_t offset, uint64_t file_size, bool fits = true) {
  bool compressed = h.flags & kFrameZstd;
  return h.stored_size <= kMaxFrameBytes && h.raw_size <= kMaxFrameBytes && h.raw_size % 8 == 0 &&
         (compressed ? h.raw_size <= max_inflated_bytes(h.kind, h.stored_size)
                     : h.stored_size == h.raw_size) &&
         !(h.flags & ~kFrameZstd) && h.kind != 0 &&
         (!fits || offset + kFrameHeaderSize + h.stored_size <= file_size);
}

enum class Check { kOk, kCut, kDamaged };

// Reads the frame at `offset` into `h` and `stored` and checks its framing
// and checksum.
Check read_frame(int fd, uint64_t offset, uint64_t file_size, const std::string& path,
                 FrameHeader& h, std::vector<uint8_t>& stored, std::string& why) {
  std::array<uint8_t, kFrameHeaderSize> hb{};
  if (read_at(fd, offset, hb.data(), hb.size(), path) < hb.size()) {
    why = "file ends inside a frame header (recording cut short)";
    return Check::kCut;
  }
  h = decode_frame_header(hb.data());
  if (!plausible(h, offset, file_size)) {
    // A sane header whose payload runs past the end: the file was cut.
    bool cut = plausible(h, offset, file_size, /*fits=*/false);
    why = cut ? "file ends inside a frame (recording cut short)" : "frame header is damaged";
    return cut ? Check::kCut : Check::kDamaged;
  }
  stored.resize(h.stored_size);  // bounded: plausible() checked it against the file
  if (read_at(fd, offset + kFrameHeaderSize, stored.data(), stored.size(), path) < stored.size()) {
    why = "file ends inside a frame (recording cut short)";
    return Check::kCut;
  }
  if (crc32c(crc32c(0, hb.data(), 12), stored.data(), stored.size()) != h.crc) {
    why = "checksum mismatch";
    return Check::kDamaged;
  }
  return Check::kOk;
}

// How many bytes the search for intact frames after damage checksums at
// most: crafted data can make every offset a plausible header with a
// large payload.
uint64_t scan_budget(uint64_t file_size) {
  return 4 * file_size + (64u << 20);
}

// The version a 1.4 writer put in the header frame: the first frame, or the
// second after a merged file's Source frame.
std::optional<std::pair<uint16_t, uint16_t>> version_in_header_frame(int fd, uint64_t file_size,
                                                                     const std::string& path) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> zstd(ZSTD_createDCtx(), ZSTD_freeDCtx);
  std::vector<uint8_t> stored;
  std::vector<uint64_t> raw;
  uint64_t offset = kFileHeaderSize;
  for (int i = 0; i < 2 && zstd && offset < file_size; ++i) {
    FrameHeader h;
    std::string why;
    if (read_frame(fd, offset, file_size, path, h, stored, why) != Check::kOk)
      return std::nullopt;
    if (h.kind == static_cast<uint16_t>(FrameKind::kRecordingInfo)) {
      if (!unpack(h, stored, raw, zstd.get()).empty())
        return std::nullopt;
      try {
        capnp::FlatArrayMessageReader message = message_of(raw);
        const auto info = message.getRoot<schema::RecordingInfo>();
        return std::pair{info.getFormatMajor(), info.getFormatMinor()};
      } catch (const kj::Exception&) {
        return std::nullopt;
      }
    }
    offset += kFrameHeaderSize + h.stored_size;
  }
  return std::nullopt;
}

// The offset of the next intact frame after damage at `from`: the first
// position whose header is plausible and whose checksum matches, or
// file_size when there is none.
uint64_t find_next_frame(int fd, uint64_t from, uint64_t file_size, const std::string& path,
                         bool& gave_up) {
  constexpr size_t kWindow = 1 << 20;
  std::vector<uint8_t> window;
  std::vector<uint8_t> stored;
  // Crafted data can make every offset a plausible header with a huge
  // payload: bound the bytes checksummed per scan, then give up.
  uint64_t budget = scan_budget(file_size);
  for (uint64_t base = from; base + kFrameHeaderSize <= file_size; base += kWindow) {
    window.resize(std::min<uint64_t>(kWindow + kFrameHeaderSize, file_size - base));
    size_t n = read_at(fd, base, window.data(), window.size(), path);
    for (size_t i = 0; i + kFrameHeaderSize <= n && i < kWindow; ++i) {
      if (!plausible(decode_frame_header(&window[i]), base + i, file_size))
        continue;
      FrameHeader h = decode_frame_header(&window[i]);
      if (h.stored_size > budget) {
        gave_up = true;
        return file_size;
      }
      budget -= h.stored_size;
      std::string why;
      if (read_frame(fd, base + i, file_size, path, h, stored, why) == Check::kOk)
        return base + i;
    }
  }
  return file_size;
}

}  // namespace

namespace {

// The recording at `path`, open, and its size.
std::pair<UniqueFd, uint64_t> open_recording(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd)
    throw Error(errno_message("cannot open " + path, errno));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0)
    throw_errno("reading " + path, errno);
  if (!S_ISREG(st.st_mode))
    throw Error(path + " is not a regular file: not an ebprof recording");
  return {std::move(fd), static_cast<uint64_t>(st.st_size)};
}

}  // namespace

// Why the bytes from `offset` on were not read: the search for an intact
// frame stopped at its budget, and what follows may hold intact frames.
std::string search_stopped(const std::string& path, uint64_t offset, uint64_t file_size) {
  return path + ": the search for an intact frame after the damage at byte " +
         std::to_string(offset) + " stopped at its budget (" +
         std::to_string(scan_budget(file_size) >> 20) +
         " MB checksummed, a bound against crafted files): the last " +
         std::to_string(file_size - offset) + " bytes were not read";
}

// What a file header at `offset` means: none there, a recording joined
// on (cat a b >c), which starts a source of its own as a merged file's
// inputs do, so that its tables never name the samples of another; or one
// of a version this reader cannot read, which ends the reading.
enum class Joined { kNo, kYes, kUnreadable };
Joined join_at(int fd, uint64_t offset, uint64_t file_size, const std::string& path, IdSpace& ids,
               ReadResult& result) {
  const std::optional<std::pair<uint16_t, uint16_t>> joined =
      joined_file_header(fd, offset, file_size, path);
  if (!joined)
    return Joined::kNo;
  if (joined->first > kNewestMajor || joined->first == 0) {
    result.complete = false;
    result.warning = path + ": a recording of format version " + std::to_string(joined->first) +
                     "." + std::to_string(joined->second) + " is joined on at byte " +
                     std::to_string(offset) +
                     ", which this ebprof-report does not read: upgrade ebprof";
    return Joined::kUnreadable;
  }
  ids.start_source();
  ids.merged = ids.merged || joined->first >= kMergedVersionMajor;
  ++result.joined;
  return Joined::kYes;
}

// A merged file (2.2 on) ends with the number of sources it holds: one cut
// where a source begins reads whole up to there, and only this tells that
// sources are missing.
void check_merge_end(const IdSpace& ids, ReadResult& result, const std::string& path) {
  if (!ids.merged || result.version_major != kMergedVersionMajor || result.version_minor < 2)
    return;
  const uint64_t read = uint64_t{ids.source} + 1;
  std::string missing;
  if (!ids.merge_end)
    missing = path + " ends before its end frame (after " + std::to_string(read) +
              " source(s)): it was cut, and the sources that followed are missing";
  else if (*ids.merge_end > read)
    missing = path + " holds " + std::to_string(read) + " of the " +
              std::to_string(*ids.merge_end) + " sources its end frame names: the rest are lost";
  if (missing.empty())
    return;
  result.complete = false;
  result.warning = result.warning.empty() ? missing : result.warning + "; " + missing;
}

// The one warning line: joined recordings, damage, then how the file ended.
void sum_up(ReadResult& result, const std::string& first_damage, const std::string& path) {
  if (result.joined) {
    std::string joined = path + " holds " + std::to_string(result.joined + 1) +
                         " recordings joined end to end (as cat makes): each is read as a " +
                         "recording of its own, as `ebprof-report merge` would have kept them";
    result.warning = result.warning.empty() ? joined : joined + "; " + result.warning;
  }
  if (result.damaged_frames) {
    result.complete = false;
    std::string damage = path + ": " + std::to_string(result.damaged_frames) +
                         " damaged frame(s) skipped, " + std::to_string(result.skipped_bytes) +
                         " bytes (first: " + first_damage + ")";
    result.warning = result.warning.empty() ? damage : damage + "; " + result.warning;
  }
}

std::pair<uint16_t, uint16_t> read_version(const std::string& path) {
  auto [fd, file_size] = open_recording(path);
  return check_file_header(fd.get(), file_size, path);
}

// A frame of a copied kind, as its copy names it: which source, kind,
// size and checksum. Its checksum covers its header and payload.
using OriginalKey = std::tuple<uint32_t, uint16_t, uint32_t, uint32_t>;

OriginalKey original_key(const IdSpace& ids, const FrameHeader& h) {
  return {ids.source, h.kind, h.stored_size, h.crc};
}

// The frame inside a copy (1.6).
struct CopiedFrame {
  FrameHeader header;
  std::vector<uint8_t> stored;
};

enum class Copy { kNone, kPassedOver, kStandsIn, kDamaged };

// A copy is passed over when its original was read, and stands in for it
// when that was damaged. It holds its original's header, checksum
// inverted (so that the search for an intact frame never takes the bytes
// inside a copy for one), then its payload. One that holds no intact
// frame of a copied kind is damaged (`why`), though its own checksum held.
Copy open_copy(const FrameHeader& h, const std::vector<uint8_t>& stored, std::vector<uint64_t>& raw,
               ZSTD_DCtx* zstd, const IdSpace& ids, const std::set<OriginalKey>& originals,
               CopiedFrame& copied, std::string& why) {
  why = unpack(h, stored, raw, zstd);
  if (!why.empty())
    return Copy::kDamaged;
  try {
    capnp::FlatArrayMessageReader message = message_of(raw);
    const capnp::Data::Reader frame = message.getRoot<schema::Copy>().getFrame();
    if (frame.size() >= kFrameHeaderSize) {
      copied.header = decode_frame_header(frame.begin());
      copied.header.crc = ~copied.header.crc;
      const FrameHeader& inner = copied.header;
      if (copied_kind(static_cast<FrameKind>(inner.kind)) && plausible(inner, 0, frame.size()) &&
          crc32c(crc32c(0, frame.begin(), 12), frame.begin() + kFrameHeaderSize,
                 inner.stored_size) == inner.crc) {
        if (originals.contains(original_key(ids, inner)))
          return Copy::kPassedOver;
        copied.stored.assign(frame.begin() + kFrameHeaderSize,
                             frame.begin() + kFrameHeaderSize + inner.stored_size);
        return Copy::kStandsIn;
      }
    }
  } catch (const kj::Exception&) {
  }
  why = "frame is damaged: a copy of no intact frame";
  return Copy::kDamaged;
}

// What delivering one file's intact frames keeps from one to the next.
struct FrameDelivery {
  RecordingVisitor& visitor;
  const std::string& path;
  ZSTD_DCtx* zstd;
  IdSpace& ids;
  std::vector<uint64_t> raw;        // 8-byte aligned, as Cap'n Proto words must be
  std::set<OriginalKey> originals;  // the copied kinds' frames read intact
  CopiedFrame copied;

  // Hands the intact frame `h`, its payload `stored`, to the visitor; a
  // copy (1.6) in place of its damaged original, or passed over. Returns
  // why the frame is damaged, or "".
  std::string deliver(const FrameHeader& h, const std::vector<uint8_t>& stored, FrameInfo info,
                      bool allow_gaps) {
    std::string why;
    const Copy copy = h.kind == static_cast<uint16_t>(FrameKind::kCopy)
                          ? open_copy(h, stored, raw, zstd, ids, originals, copied, why)
                          : Copy::kNone;
    if (copy == Copy::kDamaged)
      return why;
    if (copy == Copy::kPassedOver) {
      info.source = ids.source;
      visitor.on_frame(info);
      return "";
    }
    const bool stands_in = copy == Copy::kStandsIn;
    const FrameHeader& frame = stands_in ? copied.header : h;
    if (stands_in)
      info.kind = kind_name(frame.kind);
    why = decode_frame(frame, stands_in ? copied.stored : stored, raw, zstd, ids, allow_gaps,
                       visitor, info, path);
    if (why.empty() && copied_kind(static_cast<FrameKind>(frame.kind)))
      originals.insert(original_key(ids, frame));
    return why;
  }
};

ReadResult read_recording(const std::string& path, RecordingVisitor& visitor) {
  auto [fd, file_size] = open_recording(path);

  ReadResult result;
  std::string repaired;
  std::tie(result.version_major, result.version_minor) =
      check_file_header(fd.get(), file_size, path, &repaired);
  IdSpace ids;
  ids.merged = result.version_major >= kMergedVersionMajor;
  uint64_t offset = kFileHeaderSize;
  // One decompression context for the whole file: ZSTD_decompress() would
  // allocate and free one, window included, for every frame.
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> zstd(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!zstd)
    throw Error("zstd cannot start decompressing: out of memory");
  std::vector<uint8_t> stored;
  FrameDelivery delivery{visitor, path, zstd.get(), ids};
  std::string first_damage;

  while (offset < file_size) {
    if (const Joined joined = join_at(fd.get(), offset, file_size, path, ids, result);
        joined != Joined::kNo) {
      if (joined == Joined::kUnreadable)
        break;
      offset += kFileHeaderSize;
      continue;
    }
    FrameHeader h;
    std::string why;
    uint64_t next;  // where reading goes on after a damaged frame
    Check check = read_frame(fd.get(), offset, file_size, path, h, stored, why);
    if (check == Check::kOk) {
      next = offset + kFrameHeaderSize + h.stored_size;
      // Ids may jump after damage: here, or in an input a merge read.
      why = delivery.deliver(h, stored,
                             FrameInfo{result.frames, offset, kind_name(h.kind), h.stored_size,
                                       h.raw_size, static_cast<bool>(h.flags & kFrameZstd)},
                             result.damaged_frames > 0 || ids.merged);
      if (why.empty()) {
        ++result.frames;
        offset = next;
        continue;
      }
      // Its checksum held, so it ends where its header says: scanning
      // inside its payload could find bytes that only look like a frame.
    } else {
      bool gave_up = false;
      next = find_next_frame(fd.get(), offset + 1, file_size, path, gave_up);
      if (gave_up)
        result.warning = search_stopped(path, offset, file_size);  // said, not silent
      // A length that runs past the end means a cut file only if no intact
      // frame follows; otherwise the length itself is damaged.
      if (check == Check::kCut && next == file_size && !gave_up) {
        result.complete = false;
        result.warning = path + ": " + why + " at byte " + std::to_string(offset) +
                         "; the report covers the " + std::to_string(result.frames) +
                         " complete frames before it";
        break;
      }
      if (check == Check::kCut)
        why = "frame header is damaged";
    }
    if (result.damaged_frames++ == 0)
      first_damage = why + " at byte " + std::to_string(offset);
    result.skipped_bytes += next - offset;
    offset = next;
  }
  if (result.frames == 0)
    throw Error(path + " holds no intact frame: recording is unusable");
  check_merge_end(ids, result, path);
  sum_up(result, first_damage, path);
  if (!repaired.empty()) {
    result.complete = false;
    result.warning = result.warning.empty() ? repaired : repaired + "; " + result.warning;
  }
  return result;
}

}  // namespace ebprof::format
