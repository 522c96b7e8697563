#include <gtest/gtest.h>
#include <sys/stat.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "bpf/profile.h"
#include "common/error.h"
#include "fake_processes.h"
#include "format/reader.h"
#include "record/cgroup_paths.h"
#include "record/leaf_repair.h"
#include "record/loss_ledger.h"
#include "record/off_cpu.h"
#include "record/proc_maps.h"
#include "record/process_tracker.h"
#include "record/recorder.h"
#include "record/sample_decoder.h"
#include "record/stack_interner.h"
#include "record/stack_windows.h"

extern "C" __attribute__((noinline)) int embed_leaf_marker(int x) {
  return x * 5 + 2;
}
extern "C" __attribute__((noinline)) int embed_caller_marker(int x) {
  return embed_leaf_marker(x) + 1;
}
// Sets up its frame pointer (whatever the build's flags), then calls in a
// loop long enough for its body to span granules of bpf/profile.h.
extern "C" __attribute__((noinline, optimize("no-omit-frame-pointer"))) int framed_marker(int x) {
  volatile int v = x;
  for (int i = 0; i < 8; ++i)
    v = embed_caller_marker(v) * 3 + i;
  return v;
}

namespace ebprof::record {
namespace {

// Builds the bytes the BPF program would send, 8-byte aligned like the ring.
std::vector<uint64_t> raw_record(uint32_t tgid, uint32_t tid, const char* comm,
                                 std::vector<uint64_t> kernel, std::vector<uint64_t> user,
                                 uint64_t time_ns = 1000) {
  ebprof_sample s{};
  s.time_ns = time_ns;
  s.tgid = tgid;
  s.tid = tid;
  s.cpu = 1;
  s.kernel_frames = static_cast<unsigned short>(kernel.size());
  s.user_frames = static_cast<unsigned short>(user.size());
  std::memcpy(s.comm, comm, std::min(std::strlen(comm), sizeof s.comm - 1));
  std::copy(kernel.begin(), kernel.end(), s.ips);
  std::copy(user.begin(), user.end(), s.ips + kernel.size());
  size_t bytes = EBPROF_SAMPLE_HEADER_SIZE + (kernel.size() + user.size()) * 8;
  std::vector<uint64_t> out(bytes / 8);
  std::memcpy(out.data(), &s, bytes);
  return out;
}

std::span<const std::byte> bytes_of(const std::vector<uint64_t>& words) {
  return std::as_bytes(std::span(words));
}

TEST(SampleDecoder, DecodesFieldsAndStacksInPlace) {
  auto rec = raw_record(42, 43, "worker-thread-name-too-long", {0xa, 0xb}, {0x1, 0x2, 0x3});
  auto s = decode_sample(bytes_of(rec));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->tgid, 42u);
  EXPECT_EQ(s->tid, 43u);
  EXPECT_EQ(s->comm, "worker-thread-n");  // 15 chars + NUL in the kernel
  EXPECT_EQ(std::vector<uint64_t>(s->kernel.begin(), s->kernel.end()),
            (std::vector<uint64_t>{0xa, 0xb}));
  EXPECT_EQ(std::vector<uint64_t>(s->user.begin(), s->user.end()),
            (std::vector<uint64_t>{0x1, 0x2, 0x3}));
}

// bpf_get_stack() slices of a perf-computed callchain open with a context
// marker; it is not a frame.
TEST(SampleDecoder, DropsPerfContextMarkers) {
  const uint64_t kernel_marker = static_cast<uint64_t>(-128);  // PERF_CONTEXT_KERNEL
  const uint64_t user_marker = static_cast<uint64_t>(-512);    // PERF_CONTEXT_USER
  auto rec = raw_record(1, 1, "x", {kernel_marker, 0xffffffff81000010}, {user_marker, 0x401000});
  auto s = decode_sample(bytes_of(rec));
  ASSERT_TRUE(s);
  EXPECT_EQ(std::vector<uint64_t>(s->kernel.begin(), s->kernel.end()),
            (std::vector<uint64_t>{0xffffffff81000010}));
  EXPECT_EQ(std::vector<uint64_t>(s->user.begin(), s->user.end()),
            (std::vector<uint64_t>{0x401000}));
}

TEST(SampleDecoder, RejectsRecordsWhoseCountsDoNotFit) {
  auto rec = raw_record(1, 1, "x", {0xa}, {0x1});
  auto bytes = bytes_of(rec);
  EXPECT_FALSE(decode_sample(bytes.first(bytes.size() - 8)));  // a frame short
  EXPECT_FALSE(decode_sample(bytes.first(EBPROF_SAMPLE_HEADER_SIZE - 1)));
  auto huge = rec;
  reinterpret_cast<ebprof_sample*>(huge.data())->user_frames = EBPROF_MAX_FRAMES + 1;
  EXPECT_FALSE(decode_sample(bytes_of(huge)));
}

TEST(SampleDecoder, OffCpuRecordsCarryLengthAndStateAndAreChecked) {
  auto rec = raw_record(7, 8, "sleeper", {0xa}, {0x1});
  auto* header = reinterpret_cast<ebprof_sample*>(rec.data());
  header->kind = EBPROF_KIND_OFF_CPU;
  header->blocked_ns = 100'000'000;
  header->state = EBPROF_BLOCK_UNINTERRUPTIBLE;
  auto s = decode_sample(bytes_of(rec));
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->off_cpu);
  EXPECT_EQ(s->blocked_ns, 100'000'000u);
  EXPECT_EQ(s->state, EBPROF_BLOCK_UNINTERRUPTIBLE);
  // Never trusted: an unknown kind or state, or an empty interval.
  for (auto damage : {+[](ebprof_sample* h) { h->kind = 7; },
                      +[](ebprof_sample* h) { h->state = EBPROF_BLOCK_STATES; },
                      +[](ebprof_sample* h) { h->blocked_ns = 0; }}) {
    auto bad = rec;
    damage(reinterpret_cast<ebprof_sample*>(bad.data()));
    EXPECT_FALSE(decode_sample(bytes_of(bad)));
  }
  // A sample on CPU has no length, whatever the unused fields hold.
  header->kind = EBPROF_KIND_SAMPLE;
  auto on = decode_sample(bytes_of(rec));
  ASSERT_TRUE(on);
  EXPECT_FALSE(on->off_cpu);
  EXPECT_EQ(on->blocked_ns, 0u);
}

TEST(OffCpu, StatesParseAndBadOnesAreNamed) {
  EXPECT_EQ(parse_block_states("all"), 0x1fu);
  EXPECT_EQ(parse_block_states("S,D"), 0x6u);
  EXPECT_EQ(parse_block_states("R,I,other"), 0x19u);
  try {
    parse_block_states("S,Z");
    ADD_FAILURE() << "Z is no state";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'Z' is not a state"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_block_states(""), Error);
}

TEST(StackInterner, SameStackSameIdAndHalvesAreDistinct) {
  StackInterner interner;
  std::vector<uint64_t> a = {1, 2, 3}, b = {4};
  auto first = interner.intern(a, b);
  EXPECT_TRUE(first.is_new);
  auto again = interner.intern(a, b);
  EXPECT_FALSE(again.is_new);
  EXPECT_EQ(again.id, first.id);
  // The same frames split differently between kernel and user differ.
  std::vector<uint64_t> a2 = {1, 2}, b2 = {3, 4};
  EXPECT_NE(interner.intern(a2, b2).id, first.id);
  EXPECT_EQ(interner.size(), 2u);
  EXPECT_EQ(interner.stack(first.id).user, b);
}

// Ever new stacks (a week of them) keep memory bounded: past the limit
// the table starts afresh, ids go on, and a stack seen before it is given
// a new id and written again rather than remembered forever.
TEST(StackInterner, MemoryStaysBoundedAndIdsGoOn) {
  StackInterner interner;
  const uint64_t first[] = {0x1000};
  const auto zero = interner.intern({}, first);
  for (uint64_t i = 1; i <= StackInterner::kMaxStacks; ++i) {
    const uint64_t ips[] = {0x1000 + i};
    const auto r = interner.intern({}, ips);
    ASSERT_TRUE(r.is_new);
    ASSERT_EQ(r.id, i);
    ASSERT_EQ(interner.stack(r.id).user[0], 0x1000 + i);
    ASSERT_LE(interner.remembered(), StackInterner::kMaxStacks);
  }
  EXPECT_EQ(interner.remembered(), 1u) << "the table started afresh";
  const auto again = interner.intern({}, first);
  EXPECT_TRUE(again.is_new) << "forgotten with the old table: written again";
  EXPECT_NE(again.id, zero.id);
  EXPECT_EQ(again.id, StackInterner::kMaxStacks + 1);
  EXPECT_EQ(interner.intern({}, first).id, again.id) << "and remembered anew";
  // Frames bound it too: deep stacks start afresh sooner.
  StackInterner deep;
  std::vector<uint64_t> ips(127);
  size_t stacks = 0;
  for (; deep.remembered() == stacks; ++stacks) {
    ips[0] = stacks;
    deep.intern(ips, ips);
  }
  EXPECT_LE(stacks * 254, StackInterner::kMaxFrames + 254);
}

TEST(StackInterner, ManyDistinctStacksNeverMerge) {
  StackInterner interner;
  for (uint64_t i = 0; i < 50000; ++i) {
    std::vector<uint64_t> user = {i, i * 7};
    EXPECT_EQ(interner.intern({}, user).id, i);
  }
  EXPECT_EQ(interner.size(), 50000u);
}

TEST(ProcessTracker, CapturesOnFirstSightAndAgainForUnmappedAddresses) {
  int reads = 0;
  fakes::FakeProcesses source;
  ProcessTracker tracker(source);
  source.on_read = [&](uint32_t pid, uint64_t now) {
    ++reads;
    format::ProcessInfo p;
    p.pid = pid;
    p.captured_at_ns = now;
    p.mappings = {{0x1000, 0x2000, 0, "/bin/a"}};
    if (reads > 1)
      p.mappings.push_back({0x9000, 0xa000, 0, "/lib/dlopened.so"});
    return p;
  };
  std::vector<uint64_t> inside = {0x1100}, outside = {0x9100};
  EXPECT_TRUE(tracker.observe(7, inside, true, 0));
  EXPECT_FALSE(tracker.observe(7, inside, true, 1));
  EXPECT_FALSE(tracker.observe(0, inside, true, 1));  // idle: nothing to read
  // Too soon after the last read: rate-limited, but not forgotten: a later
  // sample of a known stack triggers the pending re-read.
  EXPECT_FALSE(tracker.observe(7, outside, true, 1000));
  auto again = tracker.observe(7, inside, false, ProcessTracker::kRereadIntervalNs + 1);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->mappings.size(), 2u);
  EXPECT_FALSE(tracker.observe(7, outside, true, 3 * ProcessTracker::kRereadIntervalNs));
  EXPECT_EQ(reads, 2);
}

TEST(ProcessTracker, ARereadThatFindsNothingNewIsNotWritten) {
  int reads = 0;
  fakes::FakeProcesses source;
  source.on_read = [&](uint32_t pid, uint64_t now) {
    ++reads;
    return format::ProcessInfo{pid, "x", now, {{0x1000, 0x2000, 0, "/bin/a"}}, ""};
  };
  ProcessTracker tracker(source);
  std::vector<uint64_t> inside = {0x1100}, junk = {0xdead0000};  // e.g. a broken frame chain
  EXPECT_TRUE(tracker.observe(7, inside, true, 0));
  EXPECT_FALSE(tracker.observe(7, junk, true, ProcessTracker::kRereadIntervalNs));
  EXPECT_EQ(reads, 2);
}

TEST(ProcessTracker, AnEmptyRereadOfAnExitingProcessIsNotReported) {
  int reads = 0;
  fakes::FakeProcesses source;
  source.on_read = [&](uint32_t pid, uint64_t now) {
    format::ProcessInfo p{pid, "x", now, {}, ""};
    if (++reads == 1)
      p.mappings = {{0x1000, 0x2000, 0, "/bin/a"}};
    return p;
  };
  ProcessTracker tracker(source);
  std::vector<uint64_t> inside = {0x1100}, outside = {0x9100};
  EXPECT_TRUE(tracker.observe(7, inside, true, 0));
  EXPECT_FALSE(tracker.observe(7, outside, true, ProcessTracker::kRereadIntervalNs));
  EXPECT_EQ(reads, 2);
  // A process whose very first read finds nothing is reported: the file says
  // why its frames have no names.
  EXPECT_TRUE(tracker.observe(8, inside, true, 0));
}

// BPF copies the stack where the leaf repair could use it: where the code
// has no frame pointer set up, by the binary's CFI.
TEST(LeafRepair, AsksForTheStackWhereCodeHasNoFramePointerSetUp) {
  ElfIdentities identities;
  fakes::FakeProcesses source;
  source.on_read = [&](uint32_t pid, uint64_t now) { return read_process(pid, now, identities); };
  ProcessTracker tracker(source);
  const uint32_t pid = static_cast<uint32_t>(getpid());
  const auto framed = reinterpret_cast<uint64_t>(&framed_marker);
  const auto libc_write = reinterpret_cast<uint64_t>(&::write);  // libc has no frame pointers
  ASSERT_TRUE(tracker.observe(pid, std::vector<uint64_t>{framed, libc_write}, true, 0));
  LeafRepair repair;
  auto needs_stack = [&](uint64_t pc) -> std::optional<bool> {
    const uint64_t region = pc >> EBPROF_CODE_REGION_SHIFT << EBPROF_CODE_REGION_SHIFT;
    const std::optional<uint64_t> granules = repair.frameless_granules(pid, pc, tracker);
    if (!granules)
      return std::nullopt;
    return (*granules >> ((pc - region) >> EBPROF_CODE_GRANULE_SHIFT)) & 1;
  };
  EXPECT_EQ(needs_stack(framed), true);  // before `push rbp`
  EXPECT_EQ(needs_stack(framed + 32), false);
  EXPECT_EQ(needs_stack(libc_write + 16), true);
  EXPECT_EQ(needs_stack(0x1000), std::nullopt);  // no mapping known there
}

TEST(SymbolEmbedder, EmbedsOnlyTheSymbolsStacksUseOncePerBuildId) {
  ElfIdentities identities;
  fakes::FakeProcesses source;
  source.on_read = [&](uint32_t pid, uint64_t now) { return read_process(pid, now, identities); };
  ProcessTracker tracker(source);
  const uint32_t pid = static_cast<uint32_t>(getpid());
  // A leaf IP, then a return address just past the start of the caller: the
  // caller is looked up at address - 1, like the report does.
  std::vector<uint64_t> stack = {reinterpret_cast<uint64_t>(&embed_leaf_marker) + 1,
                                 reinterpret_cast<uint64_t>(&embed_caller_marker) + 1};
  ASSERT_TRUE(tracker.observe(pid, stack, true, 0));
  SymbolEmbedder embedder;
  embedder.take_new(pid, stack, tracker);
  std::vector<format::EmbeddedSymbols> frames = embedder.drain();
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].build_id.size(), 20u);
  std::vector<std::string> names;
  for (const auto& s : frames[0].symbols)
    names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"embed_leaf_marker", "embed_caller_marker"}));
  EXPECT_FALSE(frames[0].segments.empty());
  embedder.take_new(pid, stack, tracker);
  EXPECT_TRUE(embedder.drain().empty());
  EXPECT_EQ(embedder.binaries(), 1u);
}

struct Count : format::RecordingVisitor {
  std::vector<format::SampleBatch> batches;
  std::vector<format::ProcessInfo> processes;
  std::vector<std::string> order;  // frame kinds as they come
  std::vector<format::KernelSymbol> kernel_symbols;
  void on_kernel_symbols(std::vector<format::KernelSymbol>&& s) override {
    order.push_back("kernel symbols");
    kernel_symbols.insert(kernel_symbols.end(), s.begin(), s.end());
  }
  void on_samples(format::SampleBatch&& b) override {
    order.push_back("batch");
    batches.push_back(std::move(b));
  }
  void on_process(format::ProcessInfo&& p) override { processes.push_back(std::move(p)); }
  std::vector<format::Losses> losses;
  void on_losses(format::Losses&& l) override { losses.push_back(std::move(l)); }
};

// Within a batch a stack or comm is defined once; each batch defines again
// those its samples use (ids going on), so that no batch needs another to
// be read, and one damaged batch costs its own samples alone.
TEST(Recorder, InternsStacksAndCommsWithinEachBatch) {
  std::string path = (std::filesystem::path(testing::TempDir()) / "recorder.data").string();
  auto writer = format::RecordingWriter::create(path);
  writer.write(format::RecordingInfo{});
  KernelSymbolIndex kernel("00000000000fff00 t irq_handler\n0000000000500000 t unused\n");
  fakes::FakeProcesses source;
  source.on_read = [](uint32_t pid, uint64_t now) {
    return format::ProcessInfo{pid, "fake", now, {{0x1000, 0x2000, 0, "/bin/a"}}, ""};
  };
  ProcessTracker tracker(source);
  LossLedger ledger;
  Recorder recorder(writer, std::move(kernel), tracker, std::nullopt, ledger);
  auto a = raw_record(10, 10, "a", {0xffff1}, {0x1100});
  auto b = raw_record(11, 12, "b", {}, {0x1200});
  auto bad = a;
  bad.pop_back();
  recorder.on_record(bytes_of(a));
  recorder.on_record(bytes_of(b));
  recorder.on_record(bytes_of(bad));
  recorder.flush(0, true);
  recorder.on_record(bytes_of(a));
  recorder.on_record(bytes_of(b));
  recorder.flush(0, true);
  // Losses are written as they grow, per CPU and cause; a record that did
  // not decode is a lost sample too, tied to no CPU.
  using format::LossCause;
  std::vector<format::LossCount> in_kernel = {{LossCause::kBufferFull, 2, false, 0},
                                              {LossCause::kBufferFull, 1, false, 1}};
  ledger.update_kernel(in_kernel);
  recorder.write_losses(5);
  recorder.write_losses(6);  // nothing new: no frame
  in_kernel[1].count = 4;
  ledger.update_kernel(in_kernel);
  recorder.write_losses(7);
  writer.close();
  EXPECT_EQ(recorder.stats().samples, 4u);
  EXPECT_EQ(ledger.totals(), (std::vector<format::LossCount>{{LossCause::kBufferFull, 6},
                                                             {LossCause::kMalformedRecord, 1}}));
  EXPECT_EQ(ledger.dropped(), 7u);
  EXPECT_EQ(tracker.process_count(), 2u);

  Count c;
  format::read_recording(path, c);
  ASSERT_EQ(c.batches.size(), 2u);
  EXPECT_EQ(c.batches[0].stacks.size(), 2u);
  EXPECT_EQ(c.batches[0].comms, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.batches[0].samples.size(), 2u);
  EXPECT_EQ(c.batches[0].samples[0].stack_id, c.batches[0].samples[1].stack_id - 1);
  // Defined again, with the next ids: the batch stands on its own.
  EXPECT_EQ(c.batches[1].first_stack_id, 2u);
  EXPECT_EQ(c.batches[1].stacks, c.batches[0].stacks);
  EXPECT_EQ(c.batches[1].first_comm_id, 2u);
  EXPECT_EQ(c.batches[1].comms, c.batches[0].comms);
  EXPECT_EQ(c.batches[1].samples[1].stack_id, 3u);
  // Every sample's stack and comm are its own batch's.
  for (const format::SampleBatch& batch : c.batches)
    for (const format::Sample& s : batch.samples) {
      EXPECT_GE(s.stack_id, batch.first_stack_id);
      EXPECT_LT(s.stack_id, batch.first_stack_id + batch.stacks.size());
      EXPECT_GE(s.comm_id, batch.first_comm_id);
      EXPECT_LT(s.comm_id, batch.first_comm_id + batch.comms.size());
    }
  ASSERT_EQ(c.processes.size(), 2u);
  EXPECT_EQ(c.processes[1].pid, 11u);
  // Only the kernel symbol a stack needed, written before its batch.
  EXPECT_EQ(c.order, (std::vector<std::string>{"kernel symbols", "batch", "batch"}));
  ASSERT_EQ(c.kernel_symbols.size(), 1u);
  EXPECT_EQ(c.kernel_symbols[0].name, "irq_handler");
  ASSERT_EQ(c.losses.size(), 2u);
  EXPECT_EQ(c.losses[0].time_ns, 5u);
  EXPECT_EQ(c.losses[0].counts, (std::vector<format::LossCount>{
                                    {LossCause::kBufferFull, 2, false, 0},
                                    {LossCause::kBufferFull, 1, false, 1},
                                    {LossCause::kMalformedRecord, 1, false, format::kNoCpu}}));
  EXPECT_EQ(c.losses[1].counts,
            (std::vector<format::LossCount>{{LossCause::kBufferFull, 3, false, 1}}));
}

// A --call-graph dwarf record: `user` frames, registers rip and rsp, and
// 256 bytes of stack from rsp, of `kind` (an interval ending at time_ns
// after `blocked_ns` off CPU).
std::vector<uint64_t> window_record(uint32_t tid, uint16_t kind, uint64_t time_ns,
                                    uint64_t blocked_ns, uint64_t fill) {
  auto rec = raw_record(
      10, tid, "w", {},
      kind == EBPROF_KIND_SWITCH_WINDOW ? std::vector<uint64_t>{} : std::vector<uint64_t>{0x1100},
      time_ns);
  auto* s = reinterpret_cast<ebprof_sample*>(rec.data());
  s->kind = kind;
  s->blocked_ns = blocked_ns;
  s->user_abi = EBPROF_ABI_64;
  s->user_regs[0] = 0x1100;
  s->user_regs[1] = 0x7fff0000;
  s->user_stack_bytes = 256;
  rec.insert(rec.end(), 256 / 8, fill);
  return rec;
}

// A --call-graph dwarf recorder writing to `path`, over one fake process.
struct DwarfRecorder {
  explicit DwarfRecorder(const std::string& path) : writer(format::RecordingWriter::create(path)) {
    format::RecordingInfo info;
    info.call_graph = format::CallGraph::kDwarf;
    info.user_stack_bytes = 256;
    info.user_registers.assign(std::begin(kUserRegisterNumbers), std::end(kUserRegisterNumbers));
    info.stack_block_bytes = StackWindows::kBlockBytes;
    writer.write(info);
    source.on_read = [](uint32_t pid, uint64_t now) {
      return format::ProcessInfo{pid, "fake", now, {{0x1000, 0x2000, 0, "/bin/a"}}, ""};
    };
  }
  format::RecordingWriter writer;
  fakes::FakeProcesses source;
  ProcessTracker tracker{source};
  LossLedger ledger;
  Recorder recorder{writer, KernelSymbolIndex(),      tracker, std::nullopt,
                    ledger, format::CallGraph::kDwarf};
};

// A switch's window stays out of the file until its interval's record
// comes: an interval too short to record takes no room.
// This process's cgroup v2: its path (from /proc/self/cgroup) and id (the
// directory's inode); nullopt on a host without cgroup v2.
std::optional<format::Cgroup> own_cgroup() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("0::")) {
      const std::string path = line.substr(3);
      struct stat st {};
      if (stat((cgroup2_mount().value_or("/sys/fs/cgroup") + path).c_str(), &st) == 0)
        return format::Cgroup{st.st_ino, path};
    }
  return std::nullopt;
}

// Each batch lists the cgroups its samples ran in, once each, with their
// paths; a cgroup gone (or never there) keeps its id without a path.
TEST(Recorder, EachBatchListsTheCgroupsItsSamplesRanIn) {
  const std::optional<format::Cgroup> own = own_cgroup();
  if (!own)
    GTEST_SKIP() << "no cgroup v2 hierarchy here";
  std::string path = (std::filesystem::path(testing::TempDir()) / "cgroups.data").string();
  auto writer = format::RecordingWriter::create(path);
  writer.write(format::RecordingInfo{});
  fakes::FakeProcesses source;
  source.on_read = [](uint32_t pid, uint64_t now) {
    return format::ProcessInfo{pid, "fake", now, {{0x1000, 0x2000, 0, "/bin/a"}}, ""};
  };
  ProcessTracker tracker(source);
  LossLedger ledger;
  Recorder recorder(writer, KernelSymbolIndex(), tracker, std::nullopt, ledger);
  const uint64_t gone = 0x7fff'ffff'ffff'fff0;
  for (uint64_t id : {own->id, uint64_t{0}, gone, own->id}) {
    auto rec = raw_record(10, 10, "a", {}, {0x1100});
    reinterpret_cast<ebprof_sample*>(rec.data())->cgroup_id = id;
    recorder.on_record(bytes_of(rec));
  }
  recorder.flush(0, true);
  auto again = raw_record(10, 10, "a", {}, {0x1100});
  reinterpret_cast<ebprof_sample*>(again.data())->cgroup_id = own->id;
  recorder.on_record(bytes_of(again));
  recorder.flush(0, true);
  writer.close();

  Count c;
  format::read_recording(path, c);
  ASSERT_EQ(c.batches.size(), 2u);
  const format::SampleBatch& first = c.batches[0];
  ASSERT_EQ(first.cgroups.size(), 2u);
  EXPECT_EQ(first.cgroups[0].id, own->id);
  if (geteuid() == 0) {  // opening a cgroup by its id needs CAP_DAC_READ_SEARCH
    EXPECT_EQ(first.cgroups[0].path, own->path);
  }
  EXPECT_EQ(first.cgroups[1], (format::Cgroup{gone, ""}));
  std::vector<uint32_t> indexes;
  for (const format::Sample& s : first.samples)
    indexes.push_back(s.cgroup);
  EXPECT_EQ(indexes, (std::vector<uint32_t>{0, format::kNoCgroup, 1, 0}));
  // Listed again in the next batch, which stands on its own.
  ASSERT_EQ(c.batches[1].cgroups.size(), 1u);
  EXPECT_EQ(c.batches[1].cgroups[0].id, own->id);
  EXPECT_EQ(c.batches[1].samples[0].cgroup, 0u);
}

TEST(Recorder, ASwitchWindowIsWrittenOnlyWithItsInterval) {
  std::string path = (std::filesystem::path(testing::TempDir()) / "windows.data").string();
  DwarfRecorder r(path);
  Recorder& recorder = r.recorder;
  recorder.on_record(bytes_of(window_record(20, EBPROF_KIND_SWITCH_WINDOW, 1000, 0, 0x11)));
  recorder.on_record(bytes_of(window_record(21, EBPROF_KIND_SAMPLE, 1500, 0, 0x22)));
  recorder.flush(0, true);
  recorder.on_record(bytes_of(window_record(20, EBPROF_KIND_OFF_CPU, 3000, 2000, 0x11)));
  recorder.flush(0, true);
  r.writer.close();
  Count c;
  format::read_recording(path, c);
  ASSERT_EQ(c.batches.size(), 2u);
  ASSERT_EQ(c.batches[0].windows.size(), 1u);  // the sample's alone
  EXPECT_EQ(c.batches[0].samples[0].window_id, 0u);
  ASSERT_EQ(c.batches[1].windows.size(), 1u);  // the interval's, with it
  EXPECT_EQ(c.batches[1].samples[0].window_id, 1u);
  EXPECT_EQ(c.batches[1].samples[0].blocked_ns, 2000u);
}

// The same window in two batches is defined in each, blocks and all, so a
// lost batch costs no later one its stacks.
TEST(Recorder, EachBatchDefinesTheWindowsAndBlocksItsSamplesUse) {
  std::string path = (std::filesystem::path(testing::TempDir()) / "batch-windows.data").string();
  DwarfRecorder r(path);
  for (int batch = 0; batch < 2; ++batch) {
    r.recorder.on_record(bytes_of(window_record(21, EBPROF_KIND_SAMPLE, 1500, 0, 0x22)));
    r.recorder.on_record(bytes_of(window_record(21, EBPROF_KIND_SAMPLE, 1600, 0, 0x22)));
    r.recorder.flush(0, true);
  }
  r.writer.close();
  Count c;
  format::read_recording(path, c);
  ASSERT_EQ(c.batches.size(), 2u);
  EXPECT_EQ(c.batches[1].blocks, c.batches[0].blocks);
  EXPECT_EQ(c.batches[1].first_window_id, 1u);
  for (const format::SampleBatch& batch : c.batches) {
    ASSERT_EQ(batch.windows.size(), 1u);
    const size_t blocks = batch.blocks.size() / StackWindows::kBlockBytes;
    ASSERT_GT(blocks, 0u);
    for (const format::Sample& s : batch.samples)
      EXPECT_EQ(s.window_id, batch.first_window_id);
    for (uint32_t id : batch.windows[0].blocks) {
      EXPECT_GE(id, batch.first_block_id);
      EXPECT_LT(id, batch.first_block_id + blocks);
    }
  }
}

// A window repeats under its id only within kReach windows: a report keeps
// no more than that many. Past it, the window is defined again, its blocks
// are not.
TEST(StackWindows, AWindowRepeatedPastTheReachIsDefinedAgain) {
  StackWindows windows;
  format::SampleBatch batch;
  const std::vector<std::byte> stack(256, std::byte{7});
  auto intern = [&](uint64_t rip) {
    const uint64_t regs[] = {rip, 0x7fff0000};
    return windows.intern(regs, format::UserAbi::k64, 0x7fff0000, stack, batch);
  };
  const uint32_t first = intern(1);
  EXPECT_EQ(intern(1), first);
  for (uint64_t rip = 2; rip < StackWindows::kReach + 1; ++rip)
    intern(rip);
  EXPECT_EQ(intern(1), first);  // kReach windows since: still in reach
  intern(StackWindows::kReach + 1);
  const size_t block_bytes = batch.blocks.size();
  const uint32_t again = intern(1);
  EXPECT_EQ(again, windows.windows() - 1);
  EXPECT_EQ(batch.windows.back().regs[0], 1u);
  EXPECT_EQ(batch.blocks.size(), block_bytes);
  EXPECT_EQ(intern(1), again);
}

}  // namespace
}  // namespace ebprof::record
