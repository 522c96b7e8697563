#pragma once

// The report's profile model, part 2: what tells samples apart. One key,
// from the moment a sample is read to the moment a writer prints it.

#include <cstddef>
#include <cstdint>

#include "report/model/frame.h"

namespace ebprof::report {

inline constexpr uint32_t kNoStack = UINT32_MAX;
inline constexpr uint32_t kNoWindow = UINT32_MAX;

// A recorded stack in the address space it ran in: what its frames are
// named from. Ids are the recording's own, so `source` (the index of the
// recording in the report: several -i, the inputs of a merged file) is
// part of it. With --call-graph dwarf, `window` is the copy of the user
// stack the user frames are unwound from.
struct StackRef {
  uint32_t source = 0;
  uint32_t pid = 0;
  uint32_t capture = 0;  // which maps capture of the pid was in effect
  uint32_t stack = kNoStack;
  uint32_t window = kNoWindow;
  bool operator==(const StackRef&) const = default;
};

// Samples with equal keys are counted together. Fields a report does not
// tell apart (threads and CPUs for a folded output, wakers unless asked
// for) are zero: see Grouping.
struct SampleKey {
  StackRef stack;
  uint32_t tid = 0;
  uint32_t comm = 0;    // index into the report's names (Profile::names)
  uint32_t cgroup = 0;  // index into the report's names: its cgroup v2 path; 0 ("") for none
  uint16_t cpu = 0;
  ThreadState state = ThreadState::kOnCpu;
  // Off CPU with --wakers: who woke the thread; waker.stack is kNoStack
  // when nobody is known.
  StackRef waker;
  uint32_t waker_comm = 0;
  // --split: which slice of wall-clock time (seconds since 1970 over the
  // slice's length); 0 without.
  uint32_t slice = 0;
  bool operator==(const SampleKey&) const = default;
};

// What a report keeps apart besides the stack, process and comm.
struct Grouping {
  bool threads = false;  // tid and cpu (pprof labels, --sort tid/cpu)
  bool cgroups = false;  // the cgroup (pprof labels, --sort cgroup)
  bool wakers = false;   // the waker (--wakers)

  SampleKey apply(SampleKey key) const {
    if (!threads)
      key.tid = key.cpu = 0;
    if (!cgroups)
      key.cgroup = 0;
    if (!wakers || key.waker.stack == kNoStack) {
      key.waker = StackRef{};
      key.waker_comm = 0;
    }
    return key;
  }
};

inline size_t hash_combine(size_t seed, uint64_t v) {
  seed ^= v + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
  return seed;
}

struct StackRefHash {
  size_t operator()(const StackRef& r) const {
    size_t h = r.source;
    for (uint64_t v : {uint64_t{r.pid}, uint64_t{r.capture}, uint64_t{r.stack}, uint64_t{r.window}})
      h = hash_combine(h, v);
    return h;
  }
};

struct SampleKeyHash {
  size_t operator()(const SampleKey& k) const {
    // Every field: a key struct that grows must grow its hash too.
    static_assert(sizeof(SampleKey) == 64, "hash the new field of SampleKey");
    size_t h = StackRefHash{}(k.stack);
    for (uint64_t v : {uint64_t{k.tid}, uint64_t{k.comm}, uint64_t{k.cgroup}, uint64_t{k.cpu},
                       static_cast<uint64_t>(k.state), uint64_t{StackRefHash{}(k.waker)},
                       uint64_t{k.waker_comm}, uint64_t{k.slice}})
      h = hash_combine(h, v);
    return h;
  }
};

// What a key's samples add up to.
struct SampleValues {
  uint64_t count = 0;   // samples and intervals off CPU; microseconds when the unit is time
  uint64_t weight = 0;  // what they stand for: events (ns of a clock), time off CPU (ns)

  void add(uint64_t n, uint64_t w) {
    count += n;
    // Saturated: a hostile length must not wrap a sum around.
    if (__builtin_add_overflow(weight, w, &weight))
      weight = UINT64_MAX;
  }
};

}  // namespace ebprof::report
