#pragma once

// The symbolize stage: recorded addresses to named frames, interned in a
// report's FrameTable. One symbolizer serves every recording of a report,
// so each file is opened, and each server asked, once per report; what is
// a recording's own (kallsyms, maps, JIT maps) comes with each address.

#include <memory>
#include <unordered_map>
#include <vector>

#include "report/load/recording.h"
#include "report/locate/file_finder.h"
#include "report/locate/options.h"
#include "report/model/profile.h"
#include "report/symbolize/user_names.h"

namespace ebprof::report {

class Symbolizer {
 public:
  Symbolizer(SymbolizeOptions options, FileFinder& files, std::shared_ptr<FrameTable> table);
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // The interned frames of the frame of `kind` at `address` in a stack
  // `ref` of `recording`: a kernel address is one frame, a native one with
  // DWARF at hand also each function inlined there, innermost first.
  // `lookup` is what to search for (a return address less one: the call).
  // Each is named once however many stacks hold it: a profile of 300k
  // distinct stacks holds a few thousand addresses.
  const std::vector<uint32_t>& frames_at(const Recording& recording, const StackRef& ref,
                                         FrameKind kind, uint64_t address, uint64_t lookup);

  // Starts opening the DWARF a native address of `ref`'s process will be
  // named from, for frames_at() to find it open. The binaries a profile
  // runs through show up in its first stacks, so only so many addresses
  // are looked at; frames_at() opens whatever they missed.
  void prefetch(const Recording& recording, const StackRef& ref, uint64_t lookup);

  // The interned frame of CPython frame `frame` of a stack `ref`: its
  // function and line, from the code object the recorder read.
  uint32_t python_frame(const Recording& recording, const StackRef& ref,
                        const format::PythonFrame& frame);

  FrameTable& table() { return *table_; }
  const std::shared_ptr<FrameTable>& shared_table() const { return table_; }

 private:
  SymbolizeOptions options_;
  UserNames user_;
  std::shared_ptr<FrameTable> table_;
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
  size_t prefetch_budget_ = 100'000;  // addresses prefetch() may still look up
  struct PythonKey {
    uint32_t source, pid;
    uint64_t code;
    uint32_t checksum;
    int32_t lasti;
    bool operator==(const PythonKey&) const = default;
  };
  struct PythonKeyHash {
    size_t operator()(const PythonKey& k) const {
      return hash_combine(hash_combine(hash_combine(k.source, k.pid), k.code),
                          (uint64_t{k.checksum} << 32) | static_cast<uint32_t>(k.lasti));
    }
  };
  std::unordered_map<PythonKey, uint32_t, PythonKeyHash> python_frames_;
};

}  // namespace ebprof::report
