// Side-band task events: decoding perf's records, and how the process
// tracker applies them in time order.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include <cstring>
#include <set>

#include "fake_processes.h"
#include "record/process_tracker.h"
#include "record/task_events.h"

namespace ebprof::record {
namespace {

// Builds a record the way the kernel lays it out: header, body, then the
// sample_id trailer (pid, tid, time) that task_event_attr() asks for.
class RecordBuilder {
 public:
  RecordBuilder(uint32_t type, uint16_t misc) {
    perf_event_header h{type, misc, 0};
    put(h);
  }
  template <typename T>
  RecordBuilder& put(const T& value) {
    const auto* p = reinterpret_cast<const std::byte*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
    return *this;
  }
  RecordBuilder& put_string(const std::string& s) {
    size_t padded = (s.size() + 1 + 7) / 8 * 8;
    size_t at = bytes_.size();
    bytes_.resize(at + padded);
    std::memcpy(bytes_.data() + at, s.data(), s.size());
    return *this;
  }
  std::vector<std::byte> finish(uint32_t pid, uint64_t time) {
    put(pid).put(pid).put(time);
    uint16_t size = static_cast<uint16_t>(bytes_.size());
    std::memcpy(bytes_.data() + offsetof(perf_event_header, size), &size, sizeof(size));
    return bytes_;
  }

 private:
  std::vector<std::byte> bytes_;
};

// The file's device is 253:1 (a device-mapper volume) and its inode 4242.
// `misc` may claim a build-id, as the kernel's flag leaks onto records of
// events that never asked for one.
std::vector<std::byte> mmap2(uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
                             const std::string& path, uint64_t time, uint32_t prot = PROT_EXEC,
                             uint16_t misc = 0) {
  RecordBuilder r(PERF_RECORD_MMAP2, misc);
  r.put(pid).put(pid).put(addr).put(len).put(pgoff);
  r.put(uint32_t{253}).put(uint32_t{1}).put(uint64_t{4242}).put(uint64_t{1});
  r.put(prot).put(uint32_t{0}).put_string(path);
  return r.finish(pid, time);
}

std::vector<std::byte> task(uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
                            uint64_t time) {
  RecordBuilder r(type, 0);
  r.put(pid).put(ppid).put(tid).put(ppid).put(time);
  return r.finish(pid, time);
}

std::vector<std::byte> exec_comm(uint32_t pid, const std::string& comm, uint64_t time) {
  RecordBuilder r(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
  r.put(pid).put(pid).put_string(comm);
  return r.finish(pid, time);
}

TEST(TaskEvents, DecodesMmap2AsTheFileItMaps) {
  auto e = decode_task_event(mmap2(7, 0x1000, 0x2000, 0x3000, "/bin/a", 55));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, TaskEvent::Kind::kMmap);
  EXPECT_EQ(e->pid, 7u);
  EXPECT_EQ(e->time_ns, 55u);
  EXPECT_EQ(e->mapping, (format::Mapping{0x1000, 0x3000, 0x3000, "/bin/a", "", ""}));
  EXPECT_EQ(e->device, makedev(253, 1));
  EXPECT_EQ(e->inode, 4242u);
  // A build-id flag this event never asked for: the body is still the
  // file's (perf 6.1 read 253 as a build-id's size here, and aborted).
  e = decode_task_event(
      mmap2(7, 0x1000, 0x2000, 0x3000, "/bin/a", 55, PROT_EXEC, PERF_RECORD_MISC_MMAP_BUILD_ID));
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->mapping.build_id.empty());
  EXPECT_EQ(e->inode, 4242u);
  EXPECT_EQ(task_event_attr().build_id, 0u) << "asking for build-ids breaks perf beside us";
  e = decode_task_event(mmap2(7, 0x1000, 0x2000, 0, "//anon", 56));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->mapping.path, "");  // as /proc/PID/maps shows anonymous memory
  EXPECT_TRUE(e->mapping.build_id.empty());
  EXPECT_FALSE(decode_task_event(mmap2(7, 0x1000, 0x2000, 0, "/data", 57, PROT_READ)));
}

TEST(TaskEvents, DecodesProcessLifeAndIgnoresThreads) {
  auto fork = decode_task_event(task(PERF_RECORD_FORK, 8, 7, 8, 10));
  ASSERT_TRUE(fork);
  EXPECT_EQ(fork->kind, TaskEvent::Kind::kFork);
  EXPECT_EQ(fork->parent, 7u);
  EXPECT_FALSE(decode_task_event(task(PERF_RECORD_FORK, 7, 7, 9, 10)));  // a new thread
  EXPECT_FALSE(decode_task_event(task(PERF_RECORD_EXIT, 7, 7, 9, 10)));  // a thread's exit
  auto exit = decode_task_event(task(PERF_RECORD_EXIT, 8, 7, 8, 11));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->kind, TaskEvent::Kind::kExit);
  auto exec = decode_task_event(exec_comm(8, "worker", 12));
  ASSERT_TRUE(exec);
  EXPECT_EQ(exec->kind, TaskEvent::Kind::kExec);
  EXPECT_EQ(exec->comm, "worker");
}

TEST(TaskEvents, RejectsMalformedRecords) {
  auto r = mmap2(7, 0x1000, 0x2000, 0, "/bin/a", 1);
  for (size_t cut : {size_t{0}, size_t{4}, size_t{8}, size_t{30}, r.size() - 1}) {
    std::vector<std::byte> shorter(r.begin(), r.begin() + static_cast<ptrdiff_t>(cut));
    EXPECT_FALSE(decode_task_event(shorter)) << cut;
  }
}

TEST(InsertMapping, ANewMappingCutsWhatItOverlaps) {
  std::vector<format::Mapping> maps = {{0x1000, 0x5000, 0x0, "/a"}};
  insert_mapping(maps, {0x2000, 0x3000, 0x0, "/b"});
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0], (format::Mapping{0x1000, 0x2000, 0x0, "/a"}));
  EXPECT_EQ(maps[1], (format::Mapping{0x2000, 0x3000, 0x0, "/b"}));
  EXPECT_EQ(maps[2], (format::Mapping{0x3000, 0x5000, 0x2000, "/a"}));
  insert_mapping(maps, {0x0, 0x10000, 0x0, "/c"});
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(maps[0].path, "/c");
}

// A tracker fed only by side-band events, never by /proc.
struct SideBandTracker {
  SideBandTracker() {
    source.on_read = [this](uint32_t pid, uint64_t now) {
      ++proc_reads;
      return format::ProcessInfo{pid, "", now, {}, "gone"};
    };
    source.on_drain = [this](std::vector<TaskEvent>& out) {
      out.insert(out.end(), pending.begin(), pending.end());
      pending.clear();
    };
  }
  std::vector<TaskEvent> pending;
  int proc_reads = 0;
  fakes::FakeProcesses source;
  ProcessTracker tracker{source};
  void add(const std::vector<std::byte>& record) {
    pending.push_back(decode_task_event(record).value());
  }
};

TEST(ProcessTracker, AProcessGoneBeforeItsFirstSampleIsNamedFromItsEvents) {
  SideBandTracker t;
  t.add(task(PERF_RECORD_FORK, 8, 7, 8, 10));
  t.add(exec_comm(8, "child", 11));
  t.add(mmap2(8, 0x1000, 0x1000, 0, "/bin/child", 12));
  t.add(task(PERF_RECORD_EXIT, 8, 7, 8, 30));
  std::vector<uint64_t> user = {0x1100};
  auto p = t.tracker.observe(8, user, true, 20);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->comm, "child");
  EXPECT_EQ(p->captured_at_ns, 12u);
  ASSERT_EQ(p->mappings.size(), 1u);
  EXPECT_EQ(p->mappings[0].path, "/bin/child");
  EXPECT_EQ(t.proc_reads, 0);
  EXPECT_FALSE(t.tracker.observe(8, user, false, 21));
}

TEST(ProcessTracker, EventsApplyInSampleTimeOrder) {
  SideBandTracker t;
  t.add(task(PERF_RECORD_FORK, 8, 7, 8, 10));
  t.add(exec_comm(8, "old", 11));
  t.add(mmap2(8, 0x1000, 0x1000, 0, "/lib/a.so", 12));
  // dlclose, then dlopen of another library at the same addresses.
  t.add(mmap2(8, 0x1000, 0x1000, 0, "/lib/b.so", 50));
  std::vector<uint64_t> user = {0x1100};
  auto before = t.tracker.observe(8, user, true, 20);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->mappings[0].path, "/lib/a.so");
  // Same stack, same address, later sample: the new library's capture.
  auto after = t.tracker.observe(8, user, false, 60);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->mappings[0].path, "/lib/b.so");
  EXPECT_EQ(after->captured_at_ns, 50u);
  EXPECT_EQ(t.proc_reads, 0);
}

TEST(ProcessTracker, AForkInheritsItsParentsMaps) {
  SideBandTracker t;
  t.tracker.seed({7, "parent", 1, {{0x1000, 0x2000, 0, "/bin/p"}}, ""});
  t.add(task(PERF_RECORD_FORK, 8, 7, 8, 10));
  std::vector<uint64_t> user = {0x1100};
  auto p = t.tracker.observe(8, user, true, 20);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->comm, "parent");
  ASSERT_EQ(p->mappings.size(), 1u);
  EXPECT_EQ(p->mappings[0].path, "/bin/p");
  // A junk address with a complete side band is not a reason to read /proc.
  std::vector<uint64_t> junk = {0xdead0000};
  EXPECT_FALSE(t.tracker.observe(8, junk, true, ProcessTracker::kRereadIntervalNs * 2));
  EXPECT_EQ(t.proc_reads, 0);
}

TEST(ProcessTracker, ALeaderExitDoesNotEndAProcessThatGoesOn) {
  SideBandTracker t;
  t.tracker.seed({7, "p", 1, {{0x1000, 0x2000, 0, "/bin/p"}}, ""});
  // The leader exits (pthread_exit in main, or a thread's exec); the
  // process maps more and is sampled later.
  t.add(task(PERF_RECORD_EXIT, 7, 1, 7, 10));
  t.add(mmap2(7, 0x5000, 0x1000, 0, "/lib/late.so", 20));
  t.tracker.refill();
  t.tracker.advance(30 + ProcessTracker::kKeepExitedNs);
  EXPECT_TRUE(t.tracker.mapping_at(7, 0x5100));
  // An exec by a surviving thread, after the leader's exit, too.
  t.add(task(PERF_RECORD_EXIT, 7, 1, 7, 100));
  t.add(exec_comm(7, "again", 101));
  t.tracker.refill();
  t.tracker.advance(200 + ProcessTracker::kKeepExitedNs);
  std::vector<uint64_t> user = {0x1100};
  auto p = t.tracker.observe(7, user, true, 300 + ProcessTracker::kKeepExitedNs);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->comm, "again");
  EXPECT_EQ(t.proc_reads, 0);
}

TEST(ProcessTracker, AForkOfAnUnseenParentReadsProcOnItsFirstSample) {
  SideBandTracker t;
  t.add(task(PERF_RECORD_FORK, 8, 5, 8, 10));  // pid 5 was never seen
  std::vector<uint64_t> user = {0x1100};
  t.tracker.observe(8, user, false, 20);
  EXPECT_EQ(t.proc_reads, 1);
}

TEST(ProcessTracker, RemappingTheSameRangeIsNoChange) {
  SideBandTracker t;
  // Written with its debuglink, which mapping events never carry.
  t.tracker.seed({7, "p", 1, {{0x1000, 0x2000, 0, "/bin/p", "\x01", "p.debug"}}, ""});
  std::vector<uint64_t> user = {0x1100};
  ASSERT_TRUE(t.tracker.observe(7, user, true, 5));
  // A JIT flipping W^X on its code: the same mapping again and again.
  for (uint64_t time = 10; time < 20; ++time)
    t.add(mmap2(7, 0x1000, 0x1000, 0, "/bin/p", time));
  EXPECT_FALSE(t.tracker.observe(7, user, false, 30));
}

TEST(ProcessTracker, DroppedEventsAreCountedWhenDrained) {
  SideBandTracker t;
  RecordBuilder lost(PERF_RECORD_LOST, 0);
  lost.put(uint64_t{1}).put(uint64_t{42});
  t.add(lost.finish(0, 1'000'000'000'000));  // far in the future: never applied yet
  t.tracker.refill();
  EXPECT_EQ(t.tracker.lost_events(), 42u);
}

TEST(ProcessTracker, ExitedProcessesAreForgottenLater) {
  SideBandTracker t;
  t.tracker.seed({7, "p", 1, {{0x1000, 0x2000, 0, "/bin/p"}}, ""});
  t.add(task(PERF_RECORD_EXIT, 7, 1, 7, 10));
  t.tracker.refill();
  t.tracker.advance(10 + ProcessTracker::kKeepExitedNs / 2);
  EXPECT_TRUE(t.tracker.mapping_at(7, 0x1100));
  t.tracker.advance(11 + ProcessTracker::kKeepExitedNs);
  EXPECT_FALSE(t.tracker.mapping_at(7, 0x1100));
}

// A sample of a process that mapped a library since the side band was last
// drained: its words are looked up in maps that know the library (the
// symbols of a copied stack were missed that way), and a sample whose
// leaf is known drains nothing.
TEST(ProcessTracker, CatchingUpDrainsForAnAddressNotYetKnown) {
  SideBandTracker t;
  int drains = 0;
  t.source.on_drain = [&](std::vector<TaskEvent>& out) {
    ++drains;
    out.insert(out.end(), t.pending.begin(), t.pending.end());
    t.pending.clear();
  };
  t.tracker.seed({7, "p", 1, {{0x1000, 0x2000, 0, "/bin/p"}}, ""});
  t.add(mmap2(7, 0x5000, 0x1000, 0, "/lib/new.so", 20));
  t.tracker.catch_up(7, 0x1100, 30);
  EXPECT_EQ(drains, 0) << "the leaf is known";
  EXPECT_FALSE(t.tracker.mapping_at(7, 0x5100));
  t.tracker.catch_up(7, 0x5100, 30);
  EXPECT_EQ(drains, 1);
  EXPECT_TRUE(t.tracker.mapping_at(7, 0x5100));
  t.add(mmap2(7, 0x8000, 0x1000, 0, "/lib/later.so", 50));
  t.tracker.catch_up(7, 0x8100, 40);
  EXPECT_FALSE(t.tracker.mapping_at(7, 0x8100)) << "mapped after the sample";
}

// A process sampled on its way out (after its EXIT record, in the kernel's
// exit path), or whose exit the kernel dropped, is not kept for ever: the
// tracker checks every so often who is still there.
TEST(ProcessTracker, ProcessesGoneWithoutAnExitTheyKeepAreForgotten) {
  SideBandTracker t;
  std::set<uint32_t> gone;
  t.source.on_alive = [&](uint32_t pid) { return !gone.count(pid); };
  t.tracker.seed({7, "p", 1, {{0x1000, 0x2000, 0, "/bin/p"}}, ""});  // its exit is dropped
  t.tracker.seed({8, "q", 1, {{0x1000, 0x2000, 0, "/bin/q"}}, ""});
  t.tracker.seed({9, "r", 1, {{0x1000, 0x2000, 0, "/bin/r"}}, ""});  // lives on
  t.add(task(PERF_RECORD_EXIT, 8, 1, 8, 10));
  std::vector<uint64_t> user = {0x1100};
  t.tracker.observe(8, user, false, 11);  // sampled after its exit
  gone = {7, 8};
  const uint64_t sweep = ProcessTracker::kSweepIntervalNs;
  t.tracker.advance(sweep);
  EXPECT_TRUE(t.tracker.mapping_at(7, 0x1100)) << "samples still on their way";
  t.tracker.advance(sweep + ProcessTracker::kKeepExitedNs + 1);
  EXPECT_FALSE(t.tracker.mapping_at(7, 0x1100));
  EXPECT_FALSE(t.tracker.mapping_at(8, 0x1100));
  EXPECT_TRUE(t.tracker.mapping_at(9, 0x1100));
}

}  // namespace
}  // namespace ebprof::record
