#pragma once

// The unwind stage (--call-graph dwarf): a sample's user frames from its
// copy of the user stack and its registers, with the call frame
// information of the binaries it ran in, by libdwfl, offline. One Dwfl per
// address space (a process's maps capture), reused for every sample in it;
// each distinct (address space, window) unwound once.

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/unique_fd.h"
#include "report/load/recording.h"
#include "report/locate/file_finder.h"
#include "report/model/facts.h"
#include "report/model/frame.h"
#include "report/model/sample_key.h"

namespace ebprof::report {

struct UnwoundStack {
  std::vector<uint64_t> pcs;  // leaf first: the sampled instruction, then return addresses
  // kNone when the walk reached the outermost frame (or joined the
  // frame-pointer chain that did); else why it stopped.
  UnnamedReason end = UnnamedReason::kNone;
  bool spliced = false;  // continued on the recorded frame-pointer chain
  // Windows rarely repeat, their outcomes do: each distinct outcome (the
  // same address space, recorded stack, frames and end) has one id, for
  // the stacks to be named once per outcome, not per window.
  uint32_t id = 0;
  // The first window that unwound to it, which can stand for all that do.
  uint32_t window = kNoWindow;
};

class AddressSpace;
class Unwinder;

// The address spaces one thread walks in, by (source, pid, capture). Each
// Dwfl keeps its modules' files open: so many at most, the least recently
// used closed first.
class SpaceCache {
 public:
  SpaceCache();
  ~SpaceCache();
  SpaceCache(const SpaceCache&) = delete;
  SpaceCache& operator=(const SpaceCache&) = delete;

  // The space of `ref`'s process: made again when the recording holds
  // more of its maps captures than when it was made (they stream in).
  AddressSpace& get(const Recording& recording, const StackRef& ref, Unwinder& unwinder);

  static constexpr size_t kMaxSpaces = 32;

 private:
  struct Key {
    uint32_t source, pid, capture;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return StackRefHash{}({k.source, k.pid, k.capture}); }
  };
  struct Space {
    Key key;
    size_t captures;  // of its process, when it was made
    std::unique_ptr<AddressSpace> space;
  };
  std::list<Space> spaces_;  // most recent first
  std::unordered_map<Key, decltype(spaces_)::iterator, KeyHash> index_;
};

class Unwinder {
 public:
  explicit Unwinder(FileFinder& files);
  ~Unwinder();
  Unwinder(const Unwinder&) = delete;
  Unwinder& operator=(const Unwinder&) = delete;

  // The user frames of `ref` (ref.window set), a stack of `recording`: of
  // a ref unwind_all() gave, or else from its window in recording.windows.
  const UnwoundStack& unwind(const Recording& recording, const StackRef& ref);

  // Unwinds `refs` (ref.window set, stacks of `recording`, windows in
  // `windows`) on every core, and turns each into the ref that stands for
  // it: its window becomes the first that unwound alike, which unwind()
  // answers for without any window. The outcomes, and their ids, are those
  // unwind() would give one ref after the other.
  void unwind_all(const Recording& recording, const IdRuns<format::UserWindow>& windows,
                  std::span<StackRef> refs);

 private:
  friend class SpaceCache;
  // A new address space for `ref`; any thread may ask.
  std::unique_ptr<AddressSpace> make_space(const Recording& recording, const StackRef& ref);
  // The walk of `ref`, its window in `windows`, not yet kept.
  UnwoundStack walk(SpaceCache& spaces, const Recording& recording,
                    const IdRuns<format::UserWindow>& windows, const StackRef& ref);
  // What tells outcomes apart: the address space, recorded stack, frames
  // and end of `u`, the walk of `ref`.
  static size_t outcome_hash(const StackRef& ref, const UnwoundStack& u);
  // The outcome `u` of `ref`, with its id: an earlier one's if identical.
  // A ref that stands for a new outcome is remembered, and with
  // `remember`, one that does not too.
  const UnwoundStack& keep(const StackRef& ref, UnwoundStack u, size_t hash, bool remember);

  FileFinder& files_;
  // By the refs that stand for outcomes, and the others unwind() walked.
  std::unordered_map<StackRef, const UnwoundStack*, StackRefHash> results_;
  std::deque<UnwoundStack> outcomes_;   // by id
  std::vector<StackRef> outcome_refs_;  // by id: whose (the window left out)
  std::unordered_map<uint64_t, uint32_t> outcome_by_hash_;
  SpaceCache spaces_;  // unwind()'s, and unwind_all()'s first thread's
  std::vector<std::unique_ptr<SpaceCache>> worker_spaces_;  // its other threads'
  // Guards files_ and cfi_files_, which making an address space uses.
  std::mutex making_;
  // Embedded tables written out as ELF files once, by build-id, for every
  // address space that needs them.
  std::unordered_map<std::string, UniqueFd> cfi_files_;
};

// Counts the samples of `recording` by how their stacks unwound.
UnwindCounts count_unwinding(const Recording& recording, Unwinder& unwinder);

}  // namespace ebprof::report
