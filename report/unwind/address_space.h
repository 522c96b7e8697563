#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/unique_fd.h"
#include "format/contents.h"
#include "report/load/recording.h"
#include "report/locate/file_finder.h"
#include "report/unwind/cfi_elf.h"
#include "report/unwind/dwarf_unwinder.h"
#include "report/unwind/step_rules.h"

struct Dwfl;
struct Dwfl_Frame;
struct Dwfl_Thread;

namespace ebprof::report {

// One process's address space as a Dwfl: a module per mapped ELF file of
// its maps capture, at its load bias, each from the file that ran (found
// by build-id) or the call frame information the recording embeds; and
// thread callbacks that serve a sample's registers and stack window.
class AddressSpace {
 public:
  AddressSpace(const Recording& recording, std::span<const format::ProcessInfo> captures,
               FileFinder& files, CfiFiles& cfi_files);
  ~AddressSpace();
  AddressSpace(const AddressSpace&) = delete;
  AddressSpace& operator=(const AddressSpace&) = delete;

  // How to walk: by step rules, with libdwfl for the windows they cannot
  // walk (the report's way), or with libdwfl alone (what the rules are
  // checked against).
  enum class Walker : uint8_t { kRules, kLibdwfl };

  // The frames of `window` (of `recording`), leaf first.
  Walk unwind(const Recording& recording, const format::UserWindow& window,
              Walker walker = Walker::kRules);

  // How many walks libdwfl made: those the rules could not, and those
  // asked of it.
  size_t libdwfl_walks() const { return libdwfl_walks_; }

  // The most frames followed.
  static constexpr size_t kMaxFrames = 1024;

 private:
  struct DwflEnd {
    void operator()(Dwfl* dwfl) const;
  };
  void report(const format::Mapping& m, const Recording& recording, FileFinder& files,
              CfiFiles& cfi_files);
  bool read_word(uint64_t address, uint64_t& value);
  // The walk by step rules alone, the fast way; nullopt where a step
  // needs libdwfl, which then walks the whole window.
  std::optional<Walk> walk_by_rules();
  Walk walk_with_libdwfl();
  // Why a walk ended, from the reads of its last step.
  UnnamedReason end_of_walk() const;

  static bool memory_read(Dwfl* dwfl, uint64_t address, uint64_t* result, void* arg);
  static bool set_initial_registers(Dwfl_Thread* thread, void* arg);
  static int on_frame(Dwfl_Frame* frame, void* arg);

  std::unique_ptr<Dwfl, DwflEnd> dwfl_;
  bool attached_ = false;
  std::optional<StepRules> rules_;
  size_t libdwfl_walks_ = 0;
  // The sample being unwound, and what its walk found.
  const Recording* recording_ = nullptr;
  const format::UserWindow* window_ = nullptr;
  uint64_t block_index_ = UINT64_MAX;  // the window's block last read, at block_
  const char* block_ = nullptr;
  std::vector<uint64_t> pcs_;
  uint64_t last_sp_ = 0;
  bool read_past_end_ = false;
  bool read_outside_ = false;
  UnnamedReason stop_ = UnnamedReason::kNone;
};

// The bytes of block `index` of `window` (0: the block holding its base),
// or null for one the window lacks or a damaged frame lost.
const char* window_block(const Recording& recording, const format::UserWindow& window,
                         uint64_t index);

// The bytes [address, address + size) of `window`, if it holds them all.
bool read_window(const Recording& recording, const format::UserWindow& window, uint64_t address,
                 void* out, size_t size);

}  // namespace ebprof::report
