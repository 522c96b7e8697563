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

class Unwinder {
 public:
  explicit Unwinder(FileFinder& files);
  ~Unwinder();
  Unwinder(const Unwinder&) = delete;
  Unwinder& operator=(const Unwinder&) = delete;

  // The user frames of `ref` (ref.window set), a stack of `recording`.
  const UnwoundStack& unwind(const Recording& recording, const StackRef& ref);

 private:
  AddressSpace& space(const Recording& recording, const StackRef& ref);

  // Each Dwfl keeps its modules' files open: so many at most, the least
  // recently used closed first.
  static constexpr size_t kMaxSpaces = 32;
  // The outcome `u` of `ref`, with its id: an earlier one's if identical.
  const UnwoundStack& keep(const StackRef& ref, UnwoundStack u);

  FileFinder& files_;
  std::unordered_map<StackRef, const UnwoundStack*, StackRefHash> results_;
  std::deque<UnwoundStack> outcomes_;   // by id
  std::vector<StackRef> outcome_refs_;  // by id: whose (the window left out)
  std::unordered_map<uint64_t, uint32_t> outcome_by_hash_;
  struct SpaceKey {
    uint32_t source, pid, capture;
    bool operator==(const SpaceKey&) const = default;
  };
  struct SpaceKeyHash {
    size_t operator()(const SpaceKey& k) const {
      return StackRefHash{}({k.source, k.pid, k.capture});
    }
  };
  std::list<std::pair<SpaceKey, std::unique_ptr<AddressSpace>>> spaces_;  // most recent first
  std::unordered_map<SpaceKey, decltype(spaces_)::iterator, SpaceKeyHash> space_index_;
  // Embedded tables written out as ELF files once, by build-id, for every
  // address space that needs them.
  std::unordered_map<std::string, UniqueFd> cfi_files_;
  friend class AddressSpace;
};

// Counts the samples of `recording` by how their stacks unwound.
UnwindCounts count_unwinding(const Recording& recording, Unwinder& unwinder);

}  // namespace ebprof::report
