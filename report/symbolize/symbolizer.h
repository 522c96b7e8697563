#pragma once

// The symbolize stage: recorded stacks to named frames, interned in a
// report's FrameTable. One symbolizer serves every recording of a report,
// so each file is opened, and each server asked, once per report; what is
// a recording's own (kallsyms, maps, JIT maps) is passed in with each
// stack.

#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "report/load/recording.h"
#include "report/locate/file_finder.h"
#include "report/locate/options.h"
#include "report/model/profile.h"
#include "report/symbolize/user_names.h"
#include "report/unwind/unwinder.h"

namespace ebprof::report {

class Symbolizer {
 public:
  Symbolizer(SymbolizeOptions options, std::shared_ptr<FrameTable> table);
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // The frames of `ref`, a stack of `recording`: kernel frames, then user
  // frames, leaf first. Each distinct ref is named once; with windows,
  // each distinct outcome of their unwinding.
  FrameView stack(const Recording& recording, const StackRef& ref);

  // Starts opening the DWARF the frames of `ref` (with a window: one
  // unwinder().unwind_all() gave) will be named from, for stack() to find
  // it open: a report prepares stacks as they are read (`recording` may
  // still be loading) and every stack before naming any. The binaries a
  // profile runs through show up in its first stacks, so only so many
  // addresses are looked at; stack() opens whatever they missed.
  void prepare(const Recording& recording, const StackRef& ref);

  const std::shared_ptr<FrameTable>& table() const { return table_; }
  Unwinder& unwinder() { return unwinder_; }

 private:
  // The interned frames of `ref`, leaf first.
  std::vector<uint32_t> name(const Recording& recording, const StackRef& ref);
  // The interned frames at one address of `ref`'s process (of its
  // recording's kernel), named once however many stacks hold it: a
  // profile of 300k distinct stacks holds a few thousand addresses.
  const std::vector<uint32_t>& frames_at(const Recording& recording, const StackRef& ref,
                                         bool kernel, uint64_t address, uint64_t lookup);

  SymbolizeOptions options_;
  FileFinder files_;
  UserNames user_;
  Unwinder unwinder_;
  std::shared_ptr<FrameTable> table_;
  std::unordered_map<StackRef, FrameView, StackRefHash> cache_;
  std::unordered_map<uint32_t, FrameView> unwound_;  // --call-graph dwarf: by outcome id
  struct AddressKey {
    uint32_t source, pid, capture;  // pid and capture UINT32_MAX for kernel addresses
    uint64_t address, lookup;
    bool operator==(const AddressKey&) const = default;
  };
  struct AddressKeyHash {
    size_t operator()(const AddressKey& k) const {
      return hash_combine(hash_combine(StackRefHash{}({k.source, k.pid, k.capture}), k.address),
                          k.lookup);
    }
  };
  std::unordered_map<AddressKey, std::vector<uint32_t>, AddressKeyHash> frames_at_;
  size_t prefetch_budget_ = 100'000;  // addresses prepare() may still look up
  std::unordered_set<uint32_t> prefetched_outcomes_;
  std::unordered_set<StackRef, StackRefHash> prefetched_stacks_;
};

}  // namespace ebprof::report
