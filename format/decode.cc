#include "format/decode.h"

#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstring>
#include <utility>

#include "common/eh_frame.h"
#include "common/error.h"
#include "format/ebprof.capnp.h"

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
  info.boot_id = str(r.getBootId());
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

// The mapped files a Process frame defines (1.10), checked, not yet
// committed to `ids`: the frame may still prove damaged.
std::unordered_map<uint32_t, MappedFile> defined_files(schema::Process::Reader r) {
  std::unordered_map<uint32_t, MappedFile> files;
  const uint32_t first = r.getFirstFileId();
  if (uint64_t{first} + r.getFiles().size() > UINT32_MAX)
    throw FrameDamage{"mapped file ids past 2^32"};
  uint32_t id = first;
  for (auto f : r.getFiles()) {
    if (f.getBuildId().size() > kMaxBuildId)
      throw FrameDamage{"build-id of " + std::to_string(f.getBuildId().size()) + " bytes"};
    files[id++] = MappedFile{str(f.getPath()), bytes(f.getBuildId()), str(f.getDebuglink())};
  }
  return files;
}

ProcessInfo decode(schema::Process::Reader r, IdSpace& ids) {
  ProcessInfo p;
  p.pid = r.getPid();
  p.comm = str(r.getComm());
  p.captured_at_ns = r.getCapturedAtNs();
  std::unordered_map<uint32_t, MappedFile> files = defined_files(r);
  for (auto m : r.getMappings()) {
    Mapping& out =
        p.mappings.emplace_back(Mapping{m.getStart(), m.getEnd(), m.getFileOffset(), {}, {}, {}});
    if (m.getFile() == 0) {
      if (m.getBuildId().size() > kMaxBuildId)
        throw FrameDamage{"build-id of " + std::to_string(m.getBuildId().size()) + " bytes"};
      out.path = str(m.getPath());
      out.build_id = bytes(m.getBuildId());
      out.debuglink = str(m.getDebuglink());
      continue;
    }
    const uint32_t id = m.getFile() - 1;
    const MappedFile* file = nullptr;
    if (auto here = files.find(id); here != files.end())
      file = &here->second;
    else if (auto before = ids.files.find(id); before != ids.files.end())
      file = &before->second;
    if (!file)
      throw FrameDamage{"a mapping names mapped file " + std::to_string(id) +
                        ", which no intact frame defined"};
    out.path = file->path;
    out.build_id = file->build_id;
    out.debuglink = file->debuglink;
  }
  p.maps_error = str(r.getMapsError());
  p.place = {r.getPidNamespace(), r.getMountNamespace(), r.getNamespacePid(), str(r.getRoot())};
  if (r.hasPython()) {
    auto py = r.getPython();
    p.python.version = py.getVersion();
    p.python.error = str(py.getError());
    p.python.build_id = bytes(py.getBuildId());
    if (p.python.build_id.size() > kMaxBuildId)
      throw FrameDamage{"build-id of " + std::to_string(p.python.build_id.size()) + " bytes"};
    p.python.eval_start = py.getEvalStart();
    p.python.eval_end = py.getEvalEnd();
  }
  ids.files.merge(files);
  return p;
}

// After a damaged frame was skipped (`allow_gaps`), a batch may start past
// the ids defined so far: the ids in between were lost with that frame.
// A batch's first ids must follow what the file defined so far; after a
// damaged frame was skipped (`allow_gaps`), they may jump past it.
void check_first_ids(schema::SampleBatch::Reader r, IdSpace& ids, bool allow_gaps) {
  const uint64_t stack = r.getFirstStackId(), comm = r.getFirstCommId();
  const uint64_t block = r.getFirstBlockId(), window = r.getFirstWindowId();
  if (allow_gaps && stack >= ids.defined.stacks && comm >= ids.defined.comms &&
      block >= ids.defined.blocks && window >= ids.defined.windows) {
    ids.defined.stacks = stack;
    ids.defined.comms = comm;
    ids.defined.blocks = block;
    ids.defined.windows = window;
  }
  if (stack != ids.defined.stacks || comm != ids.defined.comms || block != ids.defined.blocks ||
      window != ids.defined.windows)
    throw FrameDamage{"batch starts at stack " + std::to_string(stack) + ", comm " +
                      std::to_string(comm) + " but " + std::to_string(ids.defined.stacks) +
                      " stacks and " + std::to_string(ids.defined.comms) +
                      " comms precede it (a frame is missing)"};
}

// Stack blocks and the windows made of them (--call-graph dwarf).
void decode_windows(schema::SampleBatch::Reader r, IdSpace& ids, SampleBatch& batch) {
  batch.first_block_id = r.getFirstBlockId();
  batch.first_window_id = r.getFirstWindowId();
  batch.blocks = bytes(r.getBlockData());
  if (!batch.blocks.empty() && (ids.block_bytes == 0 || batch.blocks.size() % ids.block_bytes))
    throw FrameDamage{"stack blocks of " + std::to_string(batch.blocks.size()) +
                      " bytes, in blocks of " + std::to_string(ids.block_bytes)};
  ids.defined.blocks += ids.block_bytes ? batch.blocks.size() / ids.block_bytes : 0;
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
      if (id >= ids.defined.blocks)
        throw FrameDamage{"user stack window refers to block " + std::to_string(id) +
                          " that the file never defines"};
    batch.windows.push_back(std::move(window));
  }
  ids.defined.windows += batch.windows.size();
  auto window_id = r.getWindowId();
  if (window_id.size() == 0)
    return;
  if (window_id.size() != batch.samples.size())
    throw FrameDamage{"window column differs in length from the samples"};
  for (size_t i = 0; i < batch.samples.size(); ++i) {
    if (window_id[i] != kNoWindow && window_id[i] >= ids.defined.windows)
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
    if (stack_id[i] >= ids.defined.stacks || comm_id[i] >= ids.defined.comms)
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
    if (waker_stack[i] >= ids.defined.stacks || waker_comm[i] >= ids.defined.comms)
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

void decode_gil(schema::SampleBatch::Reader r, SampleBatch& batch) {
  auto gil = r.getHoldsGil();
  if (gil.size() == 0)
    return;
  if (gil.size() != batch.samples.size())
    throw FrameDamage{"GIL column differs in length from the samples"};
  for (size_t i = 0; i < batch.samples.size(); ++i)
    batch.samples[i].holds_gil = gil[i];
}

void decode_periods(schema::SampleBatch::Reader r, SampleBatch& batch) {
  auto period = r.getPeriod();
  if (period.size() == 0)
    return;
  if (period.size() != batch.samples.size())
    throw FrameDamage{"period column differs in length from the samples"};
  for (size_t i = 0; i < batch.samples.size(); ++i)
    batch.samples[i].period = period[i];
}

SampleBatch decode(schema::SampleBatch::Reader r, IdSpace& ids, bool allow_gaps) {
  check_first_ids(r, ids, allow_gaps);
  SampleBatch batch;
  batch.first_stack_id = r.getFirstStackId();
  batch.first_comm_id = r.getFirstCommId();
  for (auto s : r.getStacks()) {
    if (s.getKernel().size() > kMaxStackFrames || s.getUser().size() > kMaxStackFrames)
      throw FrameDamage{"stack deeper than " + std::to_string(kMaxStackFrames) + " frames"};
    if (s.getPython().size() > 2 * kMaxPythonFrames || s.getPython().size() % 2 != 0 ||
        s.getPythonEnd() >= kPythonEnds)
      throw FrameDamage{"a stack's Python frames are not whole"};
    batch.stacks.push_back(Stack{values<uint64_t>(s.getKernel()), values<uint64_t>(s.getUser()),
                                 values<uint64_t>(s.getPython()),
                                 static_cast<PythonEnd>(s.getPythonEnd())});
  }
  batch.comms = strs(r.getComms());
  ids.defined.stacks += batch.stacks.size();
  ids.defined.comms += batch.comms.size();
  decode_samples(r, ids, batch);
  decode_off_cpu(r, ids, batch);
  decode_windows(r, ids, batch);
  decode_cgroups(r, batch);
  decode_gil(r, batch);
  decode_periods(r, batch);
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
  c.eh_frame_size = r.getEhFrameSize();
  if (c.eh_frame_size > kMaxEhFrame)
    throw FrameDamage{".eh_frame of " + std::to_string(c.eh_frame_size) + " bytes"};
  for (schema::CfiPiece::Reader p : r.getPieces()) {
    // A piece beyond the section is damage: placing it would write outside.
    const auto b = p.getBytes();
    if (p.getOffset() > c.eh_frame_size || b.size() > c.eh_frame_size - p.getOffset())
      throw FrameDamage{"CFI piece outside its .eh_frame"};
    c.pieces.push_back({p.getOffset(), bytes(b), p.getFde(), p.getPc()});
  }
  return c;
}

PythonCode decode(schema::PythonCode::Reader r) {
  PythonCode p;
  p.pid = r.getPid();
  // A list of empty structs costs the message almost nothing and the
  // reader a CodeObject each: bounded by what a recorder ever writes.
  if (r.getCodes().size() > kMaxCodeObjectsPerFrame)
    throw FrameDamage{std::to_string(r.getCodes().size()) + " code objects in one frame"};
  for (auto c : r.getCodes())
    p.codes.push_back(CodeObject{c.getAddress(), c.getChecksum(), str(c.getQualname()),
                                 str(c.getFilename()), c.getFirstLine(), bytes(c.getLineTable())});
  return p;
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

}  // namespace

const char* frame_type_name(uint16_t kind) {
  switch (static_cast<FrameType>(kind)) {
    case FrameType::kRecordingInfo:
      return "header";
    case FrameType::kKernelSymbols:
      return "kernel-symbols";
    case FrameType::kProcess:
      return "process";
    case FrameType::kSampleBatch:
      return "samples";
    case FrameType::kRecordingEnd:
      return "end";
    case FrameType::kElfSymbols:
      return "elf-symbols";
    case FrameType::kLosses:
      return "losses";
    case FrameType::kJitSymbols:
      return "jit-symbols";
    case FrameType::kElfCfi:
      return "elf-cfi";
    case FrameType::kSource:
      return "source";
    case FrameType::kMergeEnd:
      return "merge-end";
    case FrameType::kCopy:
      return "copy";
    case FrameType::kPythonCode:
      return "python-code";
  }
  return "unknown";
}

namespace {

// The Cap'n Proto message of a frame's unpacked bytes, the work it can
// cause bounded to a small multiple of its size.
capnp::FlatArrayMessageReader message_of(const std::vector<uint64_t>& raw) {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = raw.size() * 4 + 1024;
  options.nestingLimit = 16;
  return capnp::FlatArrayMessageReader(
      kj::arrayPtr(reinterpret_cast<const capnp::word*>(raw.data()), raw.size()), options);
}

}  // namespace

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

namespace {

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
    ids.source_has_content |= kind != static_cast<uint16_t>(FrameType::kSource);
  }
};

// Decodes the message of a frame by its kind and delivers it. Throws
// FrameDamage or kj::Exception for a damaged message.
void dispatch(capnp::MessageReader& message, bool allow_gaps, Delivery& deliver) {
  IdSpace& ids = deliver.ids;
  switch (static_cast<FrameType>(deliver.kind)) {
    case FrameType::kRecordingInfo: {
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
    case FrameType::kKernelSymbols:
      return deliver(decode(message.getRoot<schema::KernelSymbols>()),
                     &RecordingVisitor::on_kernel_symbols);
    case FrameType::kProcess:
      return deliver(decode(message.getRoot<schema::Process>(), ids),
                     &RecordingVisitor::on_process);
    case FrameType::kSampleBatch: {
      const IdSpace::Counts before = ids.defined;  // kept only if the whole batch decodes
      SampleBatch batch;
      try {
        batch = decode(message.getRoot<schema::SampleBatch>(), ids, allow_gaps);
      } catch (...) {
        ids.defined = before;
        throw;
      }
      return deliver(std::move(batch), &RecordingVisitor::on_samples);
    }
    case FrameType::kElfSymbols:
      return deliver(decode(message.getRoot<schema::ElfSymbols>()),
                     &RecordingVisitor::on_elf_symbols);
    case FrameType::kRecordingEnd:
      return deliver(decode(message.getRoot<schema::RecordingEnd>()), &RecordingVisitor::on_end);
    case FrameType::kLosses:
      return deliver(decode(message.getRoot<schema::Losses>()), &RecordingVisitor::on_losses);
    case FrameType::kJitSymbols:
      return deliver(decode(message.getRoot<schema::JitSymbols>()),
                     &RecordingVisitor::on_jit_symbols);
    case FrameType::kElfCfi:
      return deliver(decode(message.getRoot<schema::ElfCfi>()), &RecordingVisitor::on_elf_cfi);
    case FrameType::kPythonCode:
      return deliver(decode(message.getRoot<schema::PythonCode>()),
                     &RecordingVisitor::on_python_code);
    case FrameType::kSource: {
      // Decoded before anything moves: a damaged one changes nothing.
      Source decoded = decode(message.getRoot<schema::Source>());
      ids.start_source();
      return deliver(std::move(decoded), &RecordingVisitor::on_source);
    }
    case FrameType::kCopy:
      break;  // opened by the reading loop (open_copy), never dispatched
    case FrameType::kMergeEnd: {
      // The reader's own: visitors see the frame, not its content.
      ids.merge_end = message.getRoot<schema::MergeEnd>().getSources();
      FrameInfo placed = deliver.info;
      placed.source = ids.source;
      return deliver.visitor.on_frame(placed);
    }
  }
  deliver.visitor.on_frame(deliver.info);  // a kind from a newer minor version: skip it
}

}  // namespace

std::string decode_frame(const FrameHeader& h, const std::vector<uint8_t>& stored,
                         std::vector<uint64_t>& raw, ZSTD_DCtx* zstd, IdSpace& ids, bool allow_gaps,
                         RecordingVisitor& visitor, const FrameInfo& info,
                         const std::string& path) {
  if (std::string damage = unpack(h, stored, raw, zstd); !damage.empty())
    return damage;
  if (info.index == 0 && h.kind != static_cast<uint16_t>(FrameType::kRecordingInfo) &&
      h.kind != static_cast<uint16_t>(FrameType::kSource))
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

std::optional<std::pair<uint16_t, uint16_t>> header_version(const std::vector<uint64_t>& raw) {
  try {
    capnp::FlatArrayMessageReader message = message_of(raw);
    const auto info = message.getRoot<schema::RecordingInfo>();
    return std::pair{info.getFormatMajor(), info.getFormatMinor()};
  } catch (const kj::Exception&) {
    return std::nullopt;
  }
}

std::span<const uint8_t> copied_bytes(const std::vector<uint64_t>& raw) {
  try {
    capnp::FlatArrayMessageReader message = message_of(raw);
    const capnp::Data::Reader frame = message.getRoot<schema::Copy>().getFrame();
    return {frame.begin(), frame.size()};
  } catch (const kj::Exception&) {
    return {};
  }
}

}  // namespace ebprof::format
