#pragma once

// --call-graph dwarf: a sample's native frames from its copy of the user
// stack and its registers, with the call frame information of the
// binaries it ran in, by libdwfl, offline. One Dwfl per address space (a
// process's maps capture), reused for every sample in it; each distinct
// (address space, window) unwound once.

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/unique_fd.h"
#include "report/locate/file_finder.h"
#include "report/unwind/cfi_elf.h"
#include "report/unwind/frame_pointer_unwinder.h"
#include "report/unwind/unwinder.h"

namespace ebprof::report {

// One walk of a window: its frames, leaf first, and where they stop.
struct Walk {
  std::vector<uint64_t> pcs;
  UnnamedReason end = UnnamedReason::kNone;  // kNone: the outermost frame was reached
  bool spliced = false;                      // continued on the recorded frame-pointer chain
};

class AddressSpace;
class DwarfUnwinder;

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
  // more of its maps captures, or of CFI pieces, than when it was made
  // (they stream in).
  AddressSpace& get(const Recording& recording, const StackRef& ref, DwarfUnwinder& unwinder);

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
    size_t captures;    // of its process, when it was made
    size_t cfi_pieces;  // the recording's, then
    std::unique_ptr<AddressSpace> space;
  };
  std::list<Space> spaces_;  // most recent first
  std::unordered_map<Key, decltype(spaces_)::iterator, KeyHash> index_;
};

class DwarfUnwinder final : public Unwinder {
 public:
  explicit DwarfUnwinder(FileFinder& files);
  ~DwarfUnwinder() override;
  DwarfUnwinder(const DwarfUnwinder&) = delete;
  DwarfUnwinder& operator=(const DwarfUnwinder&) = delete;

  // Recordings whose samples carry windows.
  bool unwinds(const format::RecordingInfo& info) const override {
    return info.call_graph == format::CallGraph::kDwarf;
  }

  // Unwinds the windows of `refs` on every core, and turns each into the
  // ref that stands for it: its window becomes the first that unwound
  // alike, which unwind() answers for without any window. The outcomes are
  // those unwind() would give one ref after the other. A ref without a
  // window stays as it is.
  void settle(const Recording& recording, const IdRuns<format::UserWindow>& windows,
              std::span<StackRef> refs) override;

  // The frames of `ref`: of a ref settle() gave, or else walked from its
  // window in recording.windows; without a window, the frame-pointer chain.
  UnwoundStack unwind(const Recording& recording, const StackRef& ref) override;

 private:
  friend class SpaceCache;
  // Windows rarely repeat, their outcomes do: each distinct outcome (the
  // same address space, recorded stack, frames and end) kept once, with
  // the first ref that unwound to it, which stands for all that do.
  struct Outcome {
    Walk walk;
    StackRef ref;
  };
  // A new address space for `ref`; any thread may ask.
  std::unique_ptr<AddressSpace> make_space(const Recording& recording, const StackRef& ref);
  // The walk of `ref`, its window in `windows`, not yet kept.
  Walk walk(SpaceCache& spaces, const Recording& recording,
            const IdRuns<format::UserWindow>& windows, const StackRef& ref);
  // What tells outcomes apart: the address space, recorded stack, frames
  // and end of `w`, the walk of `ref`.
  static size_t outcome_hash(const StackRef& ref, const Walk& w);
  // The outcome `w` of `ref`: an earlier one if identical. A ref that
  // stands for a new outcome is remembered, and with `remember`, one that
  // does not too.
  const Outcome& keep(const StackRef& ref, Walk w, size_t hash, bool remember);
  static UnwoundStack view(const Recording& recording, const Outcome& outcome);

  FileFinder& files_;
  FramePointerUnwinder chain_;  // for samples without a window
  // By the refs that stand for outcomes, and the others unwind() walked.
  std::unordered_map<StackRef, const Outcome*, StackRefHash> results_;
  std::deque<Outcome> outcomes_;
  std::unordered_map<uint64_t, const Outcome*> outcome_by_hash_;
  SpaceCache spaces_;  // unwind()'s, and settle()'s first thread's
  std::vector<std::unique_ptr<SpaceCache>> worker_spaces_;  // its other threads'
  // Guards files_ and cfi_files_, which making an address space uses.
  std::mutex making_;
  // Embedded tables written out as ELF files once, by build-id, for every
  // address space that needs them.
  CfiFiles cfi_files_;
};

}  // namespace ebprof::report
