#pragma once

// The contents of a recording as plain structs: what the writer takes and the
// reader hands out. Nothing outside format/ sees the bytes or Cap'n Proto.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bpf/frame_kind.h"
#include "common/elf_file.h"

namespace ebprof::format {

// Limits every recording respects and every reader enforces: the kernel's own
// callchain cap (PERF_MAX_STACK_DEPTH) per half of a stack, and its module
// name length (MODULE_NAME_LEN).
inline constexpr size_t kMaxStackFrames = 127;
inline constexpr size_t kMaxModuleName = 56;
inline constexpr size_t kMaxBuildId = 64;        // SHA-1 build-ids are 20 bytes
inline constexpr size_t kMaxLoadSegments = 256;  // ELF files have a handful

// What a frame of a stack is. The recorded kinds are numbered by
// bpf/frame_kind.h, which BPF, the file and the report share; the others
// are what a report makes of recorded frames, never in a file. Whether a
// frame has a name is not a kind: an unnamed kernel frame is still kernel.
enum class FrameKind : uint8_t {
  kKernel = EBPROF_FRAME_KERNEL,  // Stack::kernel: the kernel image or a module
  kNative =
      EBPROF_FRAME_NATIVE,  // Stack::user: a function in a mapped file, or outside every mapping
  kPython = EBPROF_FRAME_PYTHON,  // Stack::python: a CPython function, at a line
  // The report's:
  kInlined = 64,  // a function inlined into the next frame, at the same address (DWARF)
  kJit,  // native code in anonymous memory: named from the process's perf map, or not at all
  kOffCpuState,     // the root of a stack off CPU: why the thread was off it
  kWakerSeparator,  // between a blocked stack and its waker's (--wakers)
  kWakerComm,       // the waker's command, the top of a waker's stack
  // The root of a stack that ends early: why (an unwinding that stopped
  // short, a walk cut at kMaxStackFrames).
  kStackEnd,
};

struct KernelModule {
  std::string name;
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  std::string build_id;
  bool operator==(const KernelModule&) const = default;
};

// How user stacks were recorded (--call-graph).
enum class CallGraph : uint8_t {
  kFramePointer = 0,  // the kernel's frame-pointer walk (bpf_get_stack)
  kDwarf = 1,         // that too, and a window of stack and the registers, unwound offline
};

// Limits of --call-graph dwarf,SIZE: perf's (a perf sample's size is a u16).
inline constexpr uint32_t kMaxUserStackBytes = 65528;
inline constexpr size_t kMaxUserRegisters = 32;

// The DWARF numbers of the x86-64 registers RecordingInfo::user_registers
// name and unwinding reads: the return address (rip), rsp and rbp.
inline constexpr uint16_t kDwarfRip = 16, kDwarfRsp = 7, kDwarfRbp = 6;

struct RecordingInfo {
  std::string writer_version;
  std::string hostname;
  std::string kernel_release;
  std::string machine;
  std::vector<std::string> command_line;
  std::string event;
  uint64_t sample_frequency = 0;
  uint64_t sample_period = 0;
  uint64_t start_realtime_ns = 0;
  uint64_t start_monotonic_ns = 0;
  uint32_t cpu_count = 0;
  std::string transport;
  std::string kernel_build_id;  // raw bytes
  std::vector<KernelModule> kernel_modules;
  bool kernel_addresses_hidden = false;
  // --off-cpu: how switches were seen ("" without it) and what was kept.
  std::string off_cpu;
  uint64_t off_cpu_min_block_ns = 0;
  uint64_t off_cpu_max_block_ns = 0;  // 0: no limit
  uint32_t off_cpu_states = 0;        // bit per BlockState
  bool sampling = true;               // samples on CPU were taken
  // --call-graph dwarf: what windows hold.
  CallGraph call_graph = CallGraph::kFramePointer;
  uint32_t user_stack_bytes = 0;         // SIZE asked for
  std::vector<uint16_t> user_registers;  // DWARF numbers of UserWindow::regs (kDwarf*)
  uint32_t stack_block_bytes = 0;        // a power of two; 0 without windows
  // How far back a sample's window may be: one of the last window_reach
  // windows defined before it; 0: any earlier one (files before 1.5).
  uint32_t window_reach = 0;
  std::string boot_id;  // this boot's /proc/sys/kernel/random/boot_id; "" before 1.10
};

struct KernelSymbol {
  uint64_t address = 0;
  std::string name;
  std::string module;  // empty for the kernel image
  uint64_t size = 0;   // the symbol covers [address, address + size)
  bool operator==(const KernelSymbol&) const = default;
};

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  uint64_t file_offset = 0;
  std::string path;
  std::string build_id;   // raw bytes; empty when the file has none or was unreadable
  std::string debuglink;  // .gnu_debuglink name; empty when none
  bool operator==(const Mapping&) const = default;
};

// Where a process lives, read while it was alive; zero or empty when unknown.
struct ProcessPlace {
  uint64_t pid_namespace = 0;    // inode of /proc/PID/ns/pid
  uint64_t mount_namespace = 0;  // inode of /proc/PID/ns/mnt
  uint32_t namespace_pid = 0;    // its pid inside its own pid namespace (a container's view)
  std::string root;              // target of /proc/PID/root: "/" unless chrooted
  bool operator==(const ProcessPlace&) const = default;
};

// ProcessInfo::maps_error of a process gone before its maps were read, and
// of a child of a process whose maps were never read: reports tell these
// apart from other failures (whose text says what failed).
inline constexpr std::string_view kMapsErrorExited = "process exited before its maps were read";
inline constexpr std::string_view kMapsErrorForkedUnread =
    "forked from a process whose maps were never read";

// The CPython interpreter a process runs (format 1.8).
struct PythonRuntime {
  uint32_t version = 0;  // Py_Version (0x030b02f0 is 3.11.2); 0: not a CPython
  std::string error;     // why its frames were not read; "" when they were
  std::string build_id;  // raw bytes: the ELF file the interpreter is in
  // _PyEval_EvalFrameDefault in the process, end exclusive: a native frame
  // in it ran the Python frames up to the next entry frame.
  uint64_t eval_start = 0;
  uint64_t eval_end = 0;
  bool operator==(const PythonRuntime&) const = default;
};

struct ProcessInfo {
  uint32_t pid = 0;
  std::string comm;
  uint64_t captured_at_ns = 0;
  std::vector<Mapping> mappings;  // executable mappings, ascending
  std::string maps_error;         // why mappings is empty, if it is
  ProcessPlace place;
  PythonRuntime python;
  bool operator==(const ProcessInfo&) const = default;
};

// How a walk of a thread's CPython frames ended (bpf/profile.h's
// enum ebprof_python_end, number for number).
enum class PythonEnd : uint8_t {
  kNone = 0,        // no walk: not a Python process ebprof reads
  kComplete = 1,    // at the thread's first frame
  kNoThread = 2,    // the thread has no thread state (not, or not yet, a Python thread)
  kUnreadable = 3,  // a read of the process's memory failed
  kNotCode = 4,     // a frame whose code is no code object
  kTooDeep = 5,     // more frames than a record holds
};
inline constexpr uint8_t kPythonEnds = 6;

// One CPython frame of a stack, as BPF read it.
struct PythonFrame {
  uint64_t code = 0;      // the code object's address
  int32_t lasti = 0;      // the instruction it is at, in code units; -1 before the first
  uint32_t checksum = 0;  // of the code object's fixed fields
  bool entry = false;     // an entry frame: the C code that called the interpreter resumes after it
  bool operator==(const PythonFrame&) const = default;
};
// The two words of a frame, as BPF writes them and the file keeps them.
inline constexpr uint64_t kPythonEntryBit = uint64_t{1} << 63;
inline PythonFrame python_frame(uint64_t code_word, uint64_t where_word) {
  return {code_word & ~kPythonEntryBit, static_cast<int32_t>(where_word >> 32),
          static_cast<uint32_t>(where_word), (code_word & kPythonEntryBit) != 0};
}

// A recorded stack's frames, a list per FrameKind.
struct Stack {
  std::vector<uint64_t> kernel;  // FrameKind::kKernel, leaf first
  std::vector<uint64_t> user;    // FrameKind::kNative: the frame-pointer walk, leaf first
  // FrameKind::kPython, innermost first, two words a frame (python_frame()).
  std::vector<uint64_t> python;
  PythonEnd python_end = PythonEnd::kNone;
  size_t python_frames() const { return python.size() / 2; }
  PythonFrame python_frame_at(size_t i) const {
    return format::python_frame(python[2 * i], python[2 * i + 1]);
  }
  bool operator==(const Stack&) const = default;
};

// The most CPython frames a stack holds (bpf/profile.h's EBPROF_MAX_PY_FRAMES).
inline constexpr size_t kMaxPythonFrames = 160;

// The ABI of a window's task: a 32-bit task's registers and stack are not
// the 64-bit ones'.
enum class UserAbi : uint8_t { kUnknown = 0, k64 = 1, k32 = 2 };

// A sample's user stack from its stack pointer up, and its registers
// (--call-graph dwarf). The bytes are blocks of the batch's block store.
struct UserWindow {
  std::vector<uint64_t> regs;  // RecordingInfo::user_registers' values
  uint64_t base = 0;           // the stack pointer: address of the first byte
  uint32_t size = 0;           // bytes from base up
  UserAbi abi = UserAbi::kUnknown;
  // Block ids covering [base, base + size), lowest first; the first block
  // starts at base rounded down to the block size.
  std::vector<uint32_t> blocks;
  bool operator==(const UserWindow&) const = default;
};
inline constexpr uint32_t kNoWindow = UINT32_MAX;

// Why a thread was off CPU (--off-cpu).
enum class BlockState : uint8_t {
  kRunnable = 0,         // preempted or yielded
  kSleeping = 1,         // interruptible sleep (S)
  kUninterruptible = 2,  // D
  kIdle = 3,             // a kernel thread waiting for work (I)
  kOther = 4,            // stopped, traced, parked, ...
};
inline constexpr int kBlockStates = 5;
inline constexpr uint32_t kNoWaker = UINT32_MAX;
inline constexpr uint32_t kNoCgroup = UINT32_MAX;

struct Sample {
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC; off CPU: when the thread ran again
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint16_t cpu = 0;
  uint32_t stack_id = 0;
  uint32_t comm_id = 0;
  uint64_t blocked_ns = 0;  // 0: a sample on CPU; else an interval off CPU, this long
  BlockState state = BlockState::kRunnable;  // off CPU: why
  // Off CPU with --wakers: who woke the thread; kNoWaker when unknown.
  uint32_t waker_stack_id = kNoWaker;
  uint32_t waker_pid = 0;
  uint32_t waker_tid = 0;
  uint32_t waker_comm_id = 0;
  uint32_t window_id = kNoWindow;  // --call-graph dwarf: its user window
  uint32_t cgroup = kNoCgroup;     // index into its batch's cgroups
  bool holds_gil = false;          // a CPython thread holding its interpreter's GIL
  // A perf event's sample: the events it stands for (its period, which the
  // kernel adjusts in frequency mode); 0: one (a tracepoint, a probe, a
  // recording before 1.10).
  uint64_t period = 0;
  bool operator==(const Sample&) const = default;
};

// A cgroup v2 that samples ran in.
struct Cgroup {
  uint64_t id = 0;   // the kernel's id: its directory's inode number
  std::string path;  // in the hierarchy ("/system.slice/nginx.service"); "" when unreadable
  bool operator==(const Cgroup&) const = default;
};

// New stacks, comms, stack blocks and windows get ids first_*_id,
// first_*_id + 1, ... in order.
struct SampleBatch {
  uint32_t first_stack_id = 0;
  std::vector<Stack> stacks;
  uint32_t first_comm_id = 0;
  std::vector<std::string> comms;
  uint32_t first_block_id = 0;
  std::string blocks;  // RecordingInfo::stack_block_bytes each, concatenated
  uint32_t first_window_id = 0;
  std::vector<UserWindow> windows;
  std::vector<Cgroup> cgroups;  // those its samples ran in, each once
  std::vector<Sample> samples;
  bool operator==(const SampleBatch&) const = default;
};

// One CIE or FDE of a binary's .eh_frame, whole, at its offset there.
struct CfiPiece {
  uint64_t offset = 0;
  std::string bytes;
  bool fde = false;  // else a CIE
  uint64_t pc = 0;   // an FDE's first address: its key in .eh_frame_hdr
  bool operator==(const CfiPiece&) const = default;
};

// The call frame information of one mapped ELF file (.eh_frame and its
// index), embedded so that a report unwinds without the file.
struct ElfCfi {
  std::string build_id;  // raw bytes; the key a mapping refers to it by
  std::string path;      // where it was mapped, for display
  std::vector<LoadSegment> segments;
  uint64_t eh_frame_hdr_address = 0;  // sh_addr
  std::string eh_frame_hdr;
  uint64_t eh_frame_address = 0;
  std::string eh_frame;
  // Since 1.9, in place of the two sections: the entries of an .eh_frame
  // of eh_frame_size bytes that samples can unwind through. A binary's
  // pieces come in several frames; together they are its CFI.
  uint64_t eh_frame_size = 0;
  std::vector<CfiPiece> pieces;
};

// The function symbols of one mapped ELF file, embedded so that a report on
// another machine, or after the binary is gone, can still name its frames.
struct EmbeddedSymbols {
  std::string build_id;  // raw bytes; the key a mapping refers to it by
  std::string path;      // where it was mapped, for display
  std::vector<LoadSegment> segments;
  std::vector<ElfSymbol> symbols;
  bool operator==(const EmbeddedSymbols&) const = default;
};

// In a merged file: where the frames up to the next Source came from.
struct Source {
  uint32_t index = 0;                             // 0, 1, ... in the merged file
  std::string path;                               // the input as given to merge
  uint16_t version_major = 0, version_minor = 0;  // the input's format
};

// The last frame of a merged file (2.2): how many sources it holds.
struct MergeEnd {
  uint32_t sources = 0;
};

// A CPython code object a process's samples ran, read from it at record
// time: what names its frames, and its line table for their lines.
struct CodeObject {
  uint64_t address = 0;
  uint32_t checksum = 0;
  std::string qualname;
  std::string filename;
  uint32_t first_line = 0;
  std::string line_table;  // co_linetable's bytes
  bool operator==(const CodeObject&) const = default;
};

// The most code objects one PythonCode frame holds: a recorder writes a
// process's new ones each batch, and remembers at most 65,536 a process.
inline constexpr size_t kMaxCodeObjectsPerFrame = size_t{1} << 16;

// The code objects of one process (format 1.8).
struct PythonCode {
  uint32_t pid = 0;
  std::vector<CodeObject> codes;
  bool operator==(const PythonCode&) const = default;
};

// Symbols of one process's JIT-compiled code, from its perf map.
struct JitSymbols {
  uint32_t pid = 0;
  std::vector<ElfSymbol> symbols;  // absolute addresses
};

inline constexpr uint16_t kNoCpu = 0xffff;

// Why samples were lost, or kept with part of their stack missing. The file
// names each by its text (loss_cause_name): a reader keeps causes it does
// not know as kUnknown.
enum class LossCause : uint8_t {
  kBufferFull,             // no room in the ring or perf buffer: dropped
  kKernelStackUnreadable,  // kept without its kernel half
  kUserStackUnreadable,    // kept without its user half
  kStackTruncated,         // a half filled all kMaxStackFrames: kept, cut
  kPerfBufferOutput,       // the perf buffer refused it for another reason: dropped
  kOffCpuTableFull,        // no room to remember a thread's switch out: interval lost
  kMalformedRecord,        // the recorder could not decode what BPF sent: dropped
  kUnknown,                // written by a newer ebprof
};
inline constexpr int kLossCauses = 8;
const char* loss_cause_name(LossCause cause);  // "buffer full", ...
LossCause parse_loss_cause(std::string_view name);
// Whether samples lost to `cause` were written all the same (with a part
// of their stack missing), as 1.0 files, which do not say, had them.
bool loss_keeps_sample(LossCause cause);

// Samples lost to one cause, or kept with part of their stack missing.
struct LossCount {
  LossCause cause = LossCause::kUnknown;
  uint64_t count = 0;
  bool sample_kept = false;  // written with part of its stack missing, rather than dropped
  uint16_t cpu = kNoCpu;     // in Losses frames; kNoCpu in totals and for recorder-side causes
  bool operator==(const LossCount&) const = default;
};

// Losses since the previous such report, per CPU and cause.
struct Losses {
  uint64_t time_ns = 0;
  std::vector<LossCount> counts;
};

struct RecordingEnd {
  uint64_t end_monotonic_ns = 0;
  std::vector<LossCount> losses;  // totals by cause
  uint64_t task_events_lost = 0;
};

}  // namespace ebprof::format
