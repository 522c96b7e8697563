#include "format/writer.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "common/error.h"
#include "common/output_file.h"
#include "format/crc32c.h"
#include "format/ebprof.capnp.h"
#include "format/framing.h"

namespace ebprof::format {
namespace {

capnp::Data::Reader data(const std::string& s) {
  return capnp::Data::Reader(reinterpret_cast<const kj::byte*>(s.data()), s.size());
}

capnp::Text::Reader text(const std::string& s) {
  return capnp::Text::Reader(s.data(), s.size());
}

template <typename ListBuilder>
void set_texts(ListBuilder list, const std::vector<std::string>& values) {
  for (size_t i = 0; i < values.size(); ++i)
    list.set(i, text(values[i]));
}

template <typename ListBuilder, typename Values>
void set_all(ListBuilder list, const Values& values) {
  for (size_t i = 0; i < values.size(); ++i)
    list.set(i, values[i]);
}

// The parallel address/size/name lists of ElfSymbols and JitSymbols.
template <typename Builder>
void set_symbols(Builder b, const std::vector<ElfSymbol>& symbols) {
  auto addresses = b.initAddresses(symbols.size());
  auto sizes = b.initSizes(symbols.size());
  auto names = b.initNames(symbols.size());
  for (size_t i = 0; i < symbols.size(); ++i) {
    addresses.set(i, symbols[i].address);
    sizes.set(i, symbols[i].size);
    names.set(i, text(symbols[i].name));
  }
}

// The PT_LOAD headers of ElfSymbols and ElfCfi.
template <typename Builder>
void set_segments(Builder b, const std::vector<LoadSegment>& segments) {
  auto list = b.initSegments(segments.size());
  for (size_t i = 0; i < segments.size(); ++i) {
    list[i].setOffset(segments[i].offset);
    list[i].setVaddr(segments[i].vaddr);
    list[i].setFileSize(segments[i].file_size);
  }
}

}  // namespace

std::pair<uint16_t, uint16_t> written_version() {
  return {kVersionMajor, kVersionMinor};
}

void RecordingWriter::ZstdFree::operator()(ZSTD_CCtx_s* ctx) const {
  ZSTD_freeCCtx(ctx);
}

RecordingWriter::RecordingWriter(UniqueFd fd, std::string path, WriterOptions options)
    : fd_(std::move(fd)), path_(std::move(path)), options_(options) {
  if (options_.compress) {
    zstd_.reset(ZSTD_createCCtx());
    if (!zstd_)
      throw Error("cannot create a zstd compression context: out of memory");
    ZSTD_CCtx_setParameter(zstd_.get(), ZSTD_c_compressionLevel, options_.zstd_level);
  }
}

RecordingWriter RecordingWriter::create(const std::string& path, WriterOptions options) {
  check_output(path, "-o");
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw Error(errno_message("cannot replace " + path, errno) + ": choose another path with -o");
  // 0600: recordings hold command lines, paths and addresses.
  return create(create_new(path, "-o"), path, options);
}

RecordingWriter RecordingWriter::create(UniqueFd fd, std::string path, WriterOptions options) {
  RecordingWriter writer(std::move(fd), std::move(path), options);
  std::array<uint8_t, kFileHeaderSize> header{};
  std::copy(kMagic.begin(), kMagic.end(), header.begin());
  put_le16(&header[8], options.merged ? kMergedVersionMajor : kVersionMajor);
  put_le16(&header[10], options.merged ? kMergedVersionMinor : kVersionMinor);
  writer.write_all(header.data(), header.size());
  return writer;
}

void RecordingWriter::write_all(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_.get(), p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int err = errno;
      std::string hint = (err == ENOSPC || err == EDQUOT)
                             ? ": the recording so far is intact; free space or use -o elsewhere"
                             : "";
      throw Error(errno_message("writing " + path_, err) + hint);
    }
    p += n;
    size -= n;
    bytes_written_ += n;
  }
}

void RecordingWriter::write_frame(FrameType type, const void* data, size_t size, bool compress) {
  FrameHeader h;
  h.kind = static_cast<uint16_t>(type);
  h.raw_size = static_cast<uint32_t>(size);
  const void* payload = data;
  size_t stored = size;
  if (zstd_ && compress) {
    compressed_.resize(ZSTD_compressBound(size));
    size_t n = ZSTD_compress2(zstd_.get(), compressed_.data(), compressed_.size(), data, size);
    if (ZSTD_isError(n))
      throw Error(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
    // Incompressible payloads are stored raw; the flag tells the reader.
    if (n < size) {
      payload = compressed_.data();
      stored = n;
      h.flags |= kFrameZstd;
    }
  }
  if (size > kMaxFrameBytes)
    throw Error("internal: frame of " + std::to_string(size) + " bytes");
  h.stored_size = static_cast<uint32_t>(stored);
  auto bytes = encode_frame_header(h);
  h.crc = crc32c(crc32c(0, bytes.data(), 12), payload, stored);
  bytes = encode_frame_header(h);
  write_all(bytes.data(), bytes.size());
  write_all(payload, stored);
  if (written_twice(type)) {
    // The copied header's checksum inverted: after damage the search for
    // the next intact frame must not take the copied frame for one.
    FrameHeader inverted = h;
    inverted.crc = ~h.crc;
    const auto header = encode_frame_header(inverted);
    const auto* p = static_cast<const uint8_t*>(payload);
    std::vector<uint8_t>& copy = copies_.emplace_back(header.begin(), header.end());
    copy.insert(copy.end(), p, p + stored);
  }
}

void RecordingWriter::write_copies() {
  // Taken first: a write that throws leaves none to write twice.
  for (const std::vector<uint8_t>& copy : std::exchange(copies_, {})) {
    capnp::MallocMessageBuilder message;
    message.initRoot<schema::Copy>().setFrame(
        capnp::Data::Reader(reinterpret_cast<const kj::byte*>(copy.data()), copy.size()));
    // Stored as it is: the payload inside is compressed already.
    auto words = capnp::messageToFlatArray(message);
    auto bytes = words.asBytes();
    write_frame(FrameType::kCopy, bytes.begin(), bytes.size(), /*compress=*/false);
  }
  copied_file_ids_ = next_file_id_;
}

void RecordingWriter::write_message(FrameType type, capnp::MessageBuilder& message) {
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  write_frame(type, bytes.begin(), bytes.size());
}

void RecordingWriter::write(const RecordingInfo& info) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::RecordingInfo>();
  b.setWriterVersion(text(info.writer_version));
  b.setHostname(text(info.hostname));
  b.setKernelRelease(text(info.kernel_release));
  b.setMachine(text(info.machine));
  set_texts(b.initCommandLine(info.command_line.size()), info.command_line);
  b.setEvent(text(info.event));
  b.setSampleFrequency(info.sample_frequency);
  b.setSamplePeriod(info.sample_period);
  b.setStartRealtimeNs(info.start_realtime_ns);
  b.setStartMonotonicNs(info.start_monotonic_ns);
  b.setCpuCount(info.cpu_count);
  b.setTransport(text(info.transport));
  b.setKernelBuildId(data(info.kernel_build_id));
  auto modules = b.initKernelModules(info.kernel_modules.size());
  for (size_t i = 0; i < info.kernel_modules.size(); ++i) {
    const KernelModule& m = info.kernel_modules[i];
    modules[i].setName(text(m.name));
    modules[i].setStart(m.start);
    modules[i].setEnd(m.end);
    modules[i].setBuildId(data(m.build_id));
  }
  b.setKernelAddressesHidden(info.kernel_addresses_hidden);
  b.setOffCpu(info.off_cpu);
  b.setOffCpuMinBlockNs(info.off_cpu_min_block_ns);
  b.setOffCpuMaxBlockNs(info.off_cpu_max_block_ns);
  b.setOffCpuStates(info.off_cpu_states);
  b.setSampling(info.sampling);
  b.setCallGraph(static_cast<uint8_t>(info.call_graph));
  b.setUserStackBytes(info.user_stack_bytes);
  set_all(b.initUserRegisters(info.user_registers.size()), info.user_registers);
  b.setStackBlockBytes(info.stack_block_bytes);
  b.setWindowReach(info.window_reach);
  b.setBootId(text(info.boot_id));
  b.setFormatMajor(options_.merged ? kMergedVersionMajor : kVersionMajor);
  b.setFormatMinor(options_.merged ? kMergedVersionMinor : kVersionMinor);
  write_message(FrameType::kRecordingInfo, message);
  // Twice: one flipped bit in the only header frame made a whole file
  // unreadable. The copy costs some 400 bytes a file.
  b.setCopy(true);
  write_message(FrameType::kRecordingInfo, message);
}

void RecordingWriter::write(const std::vector<KernelSymbol>& symbols) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::KernelSymbols>();
  std::vector<std::string> modules = {""};
  auto addresses = b.initAddresses(symbols.size());
  auto names = b.initNames(symbols.size());
  auto module_index = b.initModuleIndex(symbols.size());
  auto sizes = b.initSizes(symbols.size());
  for (size_t i = 0; i < symbols.size(); ++i) {
    const auto& s = symbols[i];
    addresses.set(i, s.address);
    names.set(i, text(s.name));
    sizes.set(i, s.size);
    // kallsyms lists each module's symbols together: a linear search from
    // the back almost always hits on the first compare.
    size_t m = modules.size();
    while (m-- > 0 && modules[m] != s.module) {
    }
    if (m == static_cast<size_t>(-1)) {
      m = modules.size();
      modules.push_back(s.module);
    }
    if (m > UINT16_MAX)
      throw Error("more than 65535 kernel modules in kallsyms");
    module_index.set(i, static_cast<uint16_t>(m));
  }
  set_texts(b.initModules(modules.size()), modules);
  write_message(FrameType::kKernelSymbols, message);
}

void RecordingWriter::write(const ProcessInfo& process) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::Process>();
  b.setPid(process.pid);
  b.setComm(text(process.comm));
  b.setCapturedAtNs(process.captured_at_ns);
  auto mappings = b.initMappings(process.mappings.size());
  // Bounded over a week-long file of ever new paths: what is forgotten is
  // defined again.
  if (file_ids_.size() >= kMaxFileIds)
    file_ids_.clear();
  const uint32_t first_file = next_file_id_;
  std::vector<const Mapping*> files;  // those this frame defines
  for (size_t i = 0; i < process.mappings.size(); ++i) {
    const auto& m = process.mappings[i];
    auto mb = mappings[i];
    mb.setStart(m.start);
    mb.setEnd(m.end);
    mb.setFileOffset(m.file_offset);
    auto [known, added] = file_ids_.try_emplace({m.path, m.build_id, m.debuglink}, next_file_id_);
    if (!added && known->second < first_file && known->second >= copied_file_ids_)
      known->second = next_file_id_;  // its frame not copied yet: defined again here
    if (known->second == next_file_id_) {
      files.push_back(&m);
      ++next_file_id_;
    }
    mb.setFile(known->second + 1);
  }
  b.setFirstFileId(first_file);
  auto defined = b.initFiles(static_cast<unsigned>(files.size()));
  for (size_t i = 0; i < files.size(); ++i) {
    defined[i].setPath(text(files[i]->path));
    defined[i].setBuildId(data(files[i]->build_id));
    defined[i].setDebuglink(text(files[i]->debuglink));
  }
  b.setMapsError(text(process.maps_error));
  b.setPidNamespace(process.place.pid_namespace);
  b.setMountNamespace(process.place.mount_namespace);
  b.setNamespacePid(process.place.namespace_pid);
  b.setRoot(text(process.place.root));
  if (process.python != PythonRuntime{}) {
    auto py = b.initPython();
    py.setVersion(process.python.version);
    py.setError(text(process.python.error));
    py.setBuildId(data(process.python.build_id));
    py.setEvalStart(process.python.eval_start);
    py.setEvalEnd(process.python.eval_end);
  }
  write_message(FrameType::kProcess, message);
}

namespace {

void set_stacks(schema::SampleBatch::Builder b, const SampleBatch& batch) {
  b.setFirstStackId(batch.first_stack_id);
  auto stacks = b.initStacks(batch.stacks.size());
  for (size_t i = 0; i < batch.stacks.size(); ++i) {
    set_all(stacks[i].initKernel(batch.stacks[i].kernel.size()), batch.stacks[i].kernel);
    set_all(stacks[i].initUser(batch.stacks[i].user.size()), batch.stacks[i].user);
    if (!batch.stacks[i].python.empty())
      set_all(stacks[i].initPython(batch.stacks[i].python.size()), batch.stacks[i].python);
    stacks[i].setPythonEnd(static_cast<uint8_t>(batch.stacks[i].python_end));
  }
  b.setFirstCommId(batch.first_comm_id);
  set_texts(b.initComms(batch.comms.size()), batch.comms);
}

void set_samples(schema::SampleBatch::Builder b, const std::vector<Sample>& samples) {
  const size_t n = samples.size();
  uint64_t base = n ? samples[0].time_ns : 0;
  b.setBaseTimeNs(base);
  auto delta = b.initTimeDeltaNs(n);
  auto pid = b.initPid(n);
  auto tid = b.initTid(n);
  auto cpu = b.initCpu(n);
  auto stack_id = b.initStackId(n);
  auto comm_id = b.initCommId(n);
  uint64_t previous = base;
  for (size_t i = 0; i < n; ++i) {
    // Ring-buffer order is commit order, so times can step back slightly
    // across CPUs: deltas are signed.
    delta.set(i, static_cast<int64_t>(samples[i].time_ns - previous));
    previous = samples[i].time_ns;
    pid.set(i, samples[i].pid);
    tid.set(i, samples[i].tid);
    cpu.set(i, samples[i].cpu);
    stack_id.set(i, samples[i].stack_id);
    comm_id.set(i, samples[i].comm_id);
  }
}

// Off-CPU columns only in batches that hold intervals: a recording without
// --off-cpu pays nothing for them.
void set_off_cpu(schema::SampleBatch::Builder b, const std::vector<Sample>& samples) {
  const size_t n = samples.size();
  if (std::any_of(samples.begin(), samples.end(),
                  [](const Sample& s) { return s.waker_stack_id != kNoWaker; })) {
    auto stack = b.initWakerStackId(n);
    auto pid = b.initWakerPid(n);
    auto tid = b.initWakerTid(n);
    auto comm = b.initWakerCommId(n);
    for (size_t i = 0; i < n; ++i) {
      stack.set(i, samples[i].waker_stack_id);
      pid.set(i, samples[i].waker_pid);
      tid.set(i, samples[i].waker_tid);
      comm.set(i, samples[i].waker_comm_id);
    }
  }
  if (std::any_of(samples.begin(), samples.end(), [](const Sample& s) { return s.blocked_ns; })) {
    auto blocked = b.initBlockedNs(n);
    auto state = b.initBlockState(n);
    for (size_t i = 0; i < n; ++i) {
      blocked.set(i, samples[i].blocked_ns);
      state.set(i, static_cast<uint8_t>(samples[i].state));
    }
  }
}

// Windows (--call-graph dwarf) only in batches that hold some.
void set_windows(schema::SampleBatch::Builder b, const SampleBatch& batch) {
  b.setFirstBlockId(batch.first_block_id);
  b.setBlockData(data(batch.blocks));
  b.setFirstWindowId(batch.first_window_id);
  auto windows = b.initWindows(batch.windows.size());
  for (size_t i = 0; i < batch.windows.size(); ++i) {
    const UserWindow& w = batch.windows[i];
    set_all(windows[i].initRegs(w.regs.size()), w.regs);
    windows[i].setBase(w.base);
    windows[i].setSize(w.size);
    windows[i].setAbi(static_cast<uint8_t>(w.abi));
    set_all(windows[i].initBlocks(w.blocks.size()), w.blocks);
  }
  const std::vector<Sample>& samples = batch.samples;
  if (std::any_of(samples.begin(), samples.end(),
                  [](const Sample& s) { return s.window_id != kNoWindow; })) {
    auto window = b.initWindowId(samples.size());
    for (size_t i = 0; i < samples.size(); ++i)
      window.set(i, samples[i].window_id);
  }
}

// Cgroups only in batches whose samples ran in one.
void set_cgroups(schema::SampleBatch::Builder b, const SampleBatch& batch) {
  const std::vector<Sample>& samples = batch.samples;
  if (batch.cgroups.empty())
    return;
  auto cgroups = b.initCgroups(batch.cgroups.size());
  for (size_t i = 0; i < batch.cgroups.size(); ++i) {
    cgroups[i].setId(batch.cgroups[i].id);
    cgroups[i].setPath(text(batch.cgroups[i].path));
  }
  auto cgroup = b.initCgroup(samples.size());
  for (size_t i = 0; i < samples.size(); ++i)
    cgroup.set(i, samples[i].cgroup);
}

// Only in batches with a sample of a thread holding a GIL.
void set_gil(schema::SampleBatch::Builder b, const std::vector<Sample>& samples) {
  if (std::none_of(samples.begin(), samples.end(), [](const Sample& s) { return s.holds_gil; }))
    return;
  auto gil = b.initHoldsGil(samples.size());
  for (size_t i = 0; i < samples.size(); ++i)
    gil.set(i, samples[i].holds_gil);
}

void set_periods(schema::SampleBatch::Builder b, const std::vector<Sample>& samples) {
  if (std::none_of(samples.begin(), samples.end(), [](const Sample& s) { return s.period; }))
    return;
  auto period = b.initPeriod(samples.size());
  for (size_t i = 0; i < samples.size(); ++i)
    period.set(i, samples[i].period);
}

}  // namespace

void RecordingWriter::write(const SampleBatch& batch) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::SampleBatch>();
  set_stacks(b, batch);
  set_samples(b, batch.samples);
  set_off_cpu(b, batch.samples);
  set_windows(b, batch);
  set_cgroups(b, batch);
  set_gil(b, batch.samples);
  set_periods(b, batch.samples);
  write_message(FrameType::kSampleBatch, message);
  write_copies();
}

void RecordingWriter::write(const ElfCfi& cfi) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::ElfCfi>();
  b.setBuildId(data(cfi.build_id));
  b.setPath(text(cfi.path));
  set_segments(b, cfi.segments);
  b.setEhFrameHdrAddress(cfi.eh_frame_hdr_address);
  b.setEhFrameHdr(data(cfi.eh_frame_hdr));
  b.setEhFrameAddress(cfi.eh_frame_address);
  b.setEhFrame(data(cfi.eh_frame));
  b.setEhFrameSize(cfi.eh_frame_size);
  auto pieces = b.initPieces(static_cast<unsigned>(cfi.pieces.size()));
  for (size_t i = 0; i < cfi.pieces.size(); ++i) {
    const CfiPiece& p = cfi.pieces[i];
    pieces[i].setOffset(p.offset);
    pieces[i].setBytes(data(p.bytes));
    pieces[i].setFde(p.fde);
    pieces[i].setPc(p.pc);
  }
  write_message(FrameType::kElfCfi, message);
}

void RecordingWriter::write(const RecordingEnd& end) {
  write_copies();
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::RecordingEnd>();
  b.setEndMonotonicNs(end.end_monotonic_ns);
  auto causes = b.initLossCauses(end.losses.size());
  auto counts = b.initLossCounts(end.losses.size());
  auto kept = b.initLossSampleKept(end.losses.size());
  for (size_t i = 0; i < end.losses.size(); ++i) {
    causes.set(i, loss_cause_name(end.losses[i].cause));
    counts.set(i, end.losses[i].count);
    kept.set(i, end.losses[i].sample_kept);
  }
  b.setTaskEventsLost(end.task_events_lost);
  write_message(FrameType::kRecordingEnd, message);
}

void RecordingWriter::write(const JitSymbols& jit) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::JitSymbols>();
  b.setPid(jit.pid);
  set_symbols(b, jit.symbols);
  write_message(FrameType::kJitSymbols, message);
}

void RecordingWriter::write(const PythonCode& code) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::PythonCode>();
  b.setPid(code.pid);
  auto codes = b.initCodes(code.codes.size());
  for (size_t i = 0; i < code.codes.size(); ++i) {
    const CodeObject& c = code.codes[i];
    codes[i].setAddress(c.address);
    codes[i].setChecksum(c.checksum);
    codes[i].setQualname(text(c.qualname));
    codes[i].setFilename(text(c.filename));
    codes[i].setFirstLine(c.first_line);
    codes[i].setLineTable(data(c.line_table));
  }
  write_message(FrameType::kPythonCode, message);
}

void RecordingWriter::write(const MergeEnd& end) {
  write_copies();
  capnp::MallocMessageBuilder message;
  message.initRoot<schema::MergeEnd>().setSources(end.sources);
  write_message(FrameType::kMergeEnd, message);
}

void RecordingWriter::write(const Source& source) {
  write_copies();
  file_ids_.clear();  // each source numbers its own
  next_file_id_ = copied_file_ids_ = 0;
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::Source>();
  b.setIndex(source.index);
  b.setPath(source.path);
  b.setVersionMajor(source.version_major);
  b.setVersionMinor(source.version_minor);
  write_message(FrameType::kSource, message);
}

void RecordingWriter::append_frames(int fd) {
  std::vector<uint8_t> buffer(1 << 20);
  for (off_t at = kFileHeaderSize;;) {
    const ssize_t n = pread(fd, buffer.data(), buffer.size(), at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw_errno("reading a recording to append to " + path_, errno);
    if (n == 0)
      return;
    write_all(buffer.data(), static_cast<size_t>(n));
    at += n;
  }
}

void RecordingWriter::write(const Losses& losses) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::Losses>();
  b.setTimeNs(losses.time_ns);
  const size_t n = losses.counts.size();
  auto cpus = b.initCpus(n);
  auto causes = b.initCauses(n);
  auto counts = b.initCounts(n);
  auto kept = b.initSampleKept(n);
  for (size_t i = 0; i < n; ++i) {
    cpus.set(i, losses.counts[i].cpu);
    causes.set(i, loss_cause_name(losses.counts[i].cause));
    counts.set(i, losses.counts[i].count);
    kept.set(i, losses.counts[i].sample_kept);
  }
  write_message(FrameType::kLosses, message);
}

void RecordingWriter::write(const EmbeddedSymbols& e) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::ElfSymbols>();
  b.setBuildId(data(e.build_id));
  b.setPath(text(e.path));
  set_segments(b, e.segments);
  set_symbols(b, e.symbols);
  write_message(FrameType::kElfSymbols, message);
}

void RecordingWriter::close() {
  if (fd_ && ::close(fd_.release()) != 0)
    throw_errno("closing " + path_, errno);
}

}  // namespace ebprof::format
