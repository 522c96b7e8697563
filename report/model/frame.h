#pragma once

// The report's profile model, part 1: one stack frame, typed. Every stage
// after symbolization speaks in these; only writers turn kinds, reasons and
// states into text (write/frame_text.h).

#include <cstdint>
#include <string>

#include "format/contents.h"

namespace ebprof::report {

// What a frame is: format::FrameKind, the recorded kinds and those a
// report adds.
using format::FrameKind;

// Why a frame has no name; kNone when it has one.
enum class UnnamedReason : uint8_t {
  kNone,
  kStackLost,                // the stack was defined in a frame of the file that is damaged
  kMapsNotRecorded,          // no maps capture of the process
  kExitedBeforeMapsRead,     // the process was gone before its maps could be read
  kForkedFromUnreadProcess,  // a child of a process whose maps were never read
  kMapsUnreadable,           // reading its maps failed otherwise (dump shows why)
  kNoMapping,                // the address is in none of the process's mappings
  kJitMapMissing,            // anonymous executable memory, and no perf map names it
  kBinaryNotFound,           // no file with the recorded build-id, nothing embedded
  kBuildIdMismatch,          // the file found is another build, and nothing embedded
  kStripped,                 // the file has no symbol here and no debuginfo was found
  kNotInEmbeddedTable,       // the recording's embedded table has no symbol here
  kNoSymbol,                 // a complete symbol table has none here ([vdso], gaps)
  kKernelAddressesHidden,    // kptr_restrict hid kallsyms when recording
  kNoKallsyms,               // the recording holds no kernel symbols
  kNoKernelSymbol,           // below every kernel symbol, or past the one below
  kCodeObjectNotRead,        // a Python frame whose code object the recorder could not read
  // Why an unwound stack (--call-graph dwarf) ends early (kStackEnd).
  kWindowTooSmall,   // the walk reached the end of the copied stack
  kNoCfi,            // no call frame information for an address on the way
  kUnreadableStack,  // the walk needed stack the window does not hold, below it
  kUnwindLoop,       // a frame did not move up the stack
  kCfiTooCostly,     // CFI whose DWARF expressions branch (and can loop) or run long
  kStackTooDeep,     // more frames than a report follows
  k32BitTask,        // a 32-bit task's stack, which a 64-bit unwinder cannot read
  kStackTruncated,   // a frame-pointer walk cut at the most frames a sample holds
  kPythonWalkCut,    // BPF's walk of the Python frames stopped before the first one
};

// What a thread was doing when its stack was taken.
enum class ThreadState : uint8_t {
  // Off CPU, numbered as format::BlockState.
  kRunnable = 0,  // preempted or yielded (R)
  kSleeping,      // S
  kUninterruptible,
  kIdle,  // a kernel thread waiting for work (I)
  kOther,
  kUnknown,  // a state number this report does not know (a damaged or newer file)
  kOnCpu,    // a sample: running
};

struct Frame {
  FrameKind kind = FrameKind::kNative;
  UnnamedReason reason = UnnamedReason::kNone;
  ThreadState state = ThreadState::kOnCpu;  // kOffCpuState: which
  int line = 0;                             // from DWARF, 0 when unknown
  uint64_t address = 0;                     // as recorded: the sampled IP, or a return address
  // Named: of `address` from the symbol's start. Unnamed anonymous memory:
  // from the mapping's start (where it is shown).
  uint64_t offset = 0;
  // `address` as an offset into the mapped file: what pprof and --join
  // address match by (the address itself for kernel, JIT and unmapped code).
  uint64_t file_offset = 0;
  // Demangled unless --no-demangle, with " file.cc:12" under --lines. An
  // unnamed kernel frame: the symbol below it, if any ("past NAME"). A
  // waker's comm frame: the comm.
  std::string name;
  std::string system_name;  // as the binary has it (mangled), for pprof
  std::string module;       // "libc.so.6", "[kernel.kallsyms]", "[ext4]", "[anon]", ...
  std::string path;         // the mapped file; "" when not file-backed
  std::string build_id;     // raw bytes, of the mapped file
  std::string file;         // source file, from DWARF

  bool named() const { return reason == UnnamedReason::kNone; }
  bool kernel() const { return kind == FrameKind::kKernel; }
  // Frames a report adds to recorded stacks (off-CPU state, wakers).
  bool synthetic() const { return kind >= FrameKind::kOffCpuState; }
  bool operator==(const Frame&) const = default;
};

}  // namespace ebprof::report
