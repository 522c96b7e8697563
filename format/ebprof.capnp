# The messages inside an ebprof recording's frames. docs/format.md describes
# the framing around them. Evolve only by appending fields with new ordinals.
@0xb3eb4ff0c8190cec;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ebprof::format::schema");

# Frame kind 1: first frame of every file.
struct RecordingInfo {
  writerVersion @0 :Text;       # ebprof version that wrote the file
  hostname @1 :Text;
  kernelRelease @2 :Text;       # uname -r
  machine @3 :Text;             # uname -m
  commandLine @4 :List(Text);   # argv of ebprof-record
  event @5 :Text;               # e.g. "cpu-clock"
  sampleFrequency @6 :UInt64;   # Hz; 0 when samplePeriod is used
  samplePeriod @7 :UInt64;      # events per sample; 0 when sampleFrequency is used
  startRealtimeNs @8 :UInt64;   # CLOCK_REALTIME at start
  startMonotonicNs @9 :UInt64;  # CLOCK_MONOTONIC at the same instant: sample times use this clock
  cpuCount @10 :UInt32;         # CPUs sampled
  transport @11 :Text;          # "ringbuf" or "perfbuf"
  # Since 1.1:
  kernelBuildId @12 :Data;      # GNU build-id of the running kernel image (/sys/kernel/notes)
  kernelModules @13 :List(KernelModule); # modules loaded at start
  kernelAddressesHidden @14 :Bool; # kptr_restrict hid kallsyms: kernel frames cannot be named
  # Since 1.2:
  offCpu @15 :Text;             # how switches were seen with --off-cpu ("raw_tp/sched_switch",
                                # ...); empty without it
  offCpuMinBlockNs @16 :UInt64; # intervals shorter than this were not recorded
  offCpuMaxBlockNs @17 :UInt64; # nor longer than this (0: no limit)
  offCpuStates @18 :UInt32;     # bit per blockState recorded
  sampling @19 :Bool = true;    # false with --off-cpu-only: no samples on CPU
  # Since 1.3, with --call-graph dwarf:
  callGraph @20 :UInt8;         # 0 frame pointers, 1 dwarf: samples carry user stack windows
  userStackBytes @21 :UInt32;   # the window size asked for (--call-graph dwarf,SIZE)
  userRegisters @22 :List(UInt16); # DWARF numbers of UserWindow.regs, in order
  stackBlockBytes @23 :UInt32;  # the size of the blocks windows are made of
  # 1.4: the writer writes every header twice, the second with copy set: a
  # reader whose first header frame is damaged reads the file with the copy.
  copy @24 :Bool;
  # 1.4: the file's format version again, under the frame's checksum: what a
  # file whose 16-byte file header was damaged is read as.
  formatMajor @25 :UInt16;
  formatMinor @26 :UInt16;
  # 1.5, dwarf: a sample's window is one of the last windowReach windows
  # defined before it (the recorder defines one again past that), so a
  # reader keeps that many; 0 (older files): any window defined before.
  windowReach @27 :UInt32;
  # 1.10: /proc/sys/kernel/random/boot_id of the recording's boot: a report
  # made in the same boot may look for files the recording lacks where the
  # processes left them (a JIT perf map written as a JVM exited).
  bootId @28 :Text;
}

struct KernelModule {
  name @0 :Text;
  start @1 :UInt64;             # load address range, end exclusive (0 when hidden)
  end @2 :UInt64;
  buildId @3 :Data;             # from /sys/module/NAME/notes; empty when unreadable
}

# Frame kind 2: the kallsyms text symbols that sampled kernel addresses fall
# in, written before the first batch that needs them. Several frames add up.
struct KernelSymbols {
  addresses @0 :List(UInt64);   # ascending
  names @1 :List(Text);         # parallel to addresses
  moduleIndex @2 :List(UInt16); # parallel; index into modules, 0 = the kernel image
  modules @3 :List(Text);       # modules[0] is ""
  sizes @4 :List(UInt64);       # parallel; a symbol covers [address, address + size)
}

# Frame kind 3: what is known about one process, captured at capturedAtNs.
# A pid can have several captures; a sample uses the latest one taken at or
# before its time, then later ones for addresses that one does not map.
struct Process {
  pid @0 :UInt32;
  comm @1 :Text;
  capturedAtNs @2 :UInt64;      # CLOCK_MONOTONIC
  mappings @3 :List(Mapping);   # executable mappings only
  mapsError @4 :Text;           # why mappings is empty, if it is ("" when they were read)
  # Since 1.1; 0 or "" when unknown (the process was gone before they were read).
  pidNamespace @5 :UInt64;      # inode of /proc/PID/ns/pid
  mountNamespace @6 :UInt64;    # inode of /proc/PID/ns/mnt
  namespacePid @7 :UInt32;      # the pid inside its own pid namespace (NStgid)
  root @8 :Text;                # target of /proc/PID/root ("/" unless chrooted)
  # Since 1.8: the CPython interpreter the process runs, if any.
  python @9 :PythonRuntime;
  # Since 1.10: the mapped files this frame introduces, with ids
  # firstFileId, firstFileId+1, ... in the file's (or merged source's) own
  # numbering. A mapping names its file by id: one defined here, or in an
  # earlier Process frame whose Copy came before this frame.
  firstFileId @10 :UInt32;
  files @11 :List(MappedFile);
}

struct MappedFile {
  path @0 :Text;                # as /proc/PID/maps shows it ("[vdso]" for pseudo-files)
  buildId @1 :Data;             # GNU build-id of the mapped file; empty when none or unreadable
  debuglink @2 :Text;           # its .gnu_debuglink file name; empty when none
}

struct PythonRuntime {
  version @0 :UInt32;           # its Py_Version (0x030b02f0 is 3.11.2); 0: not a CPython
  error @1 :Text;               # why its frames were not read; "" when they were
  buildId @2 :Data;             # the ELF file the interpreter is in (python3.11 or libpython)
  evalStart @3 :UInt64;         # _PyEval_EvalFrameDefault in the process, end exclusive: a
  evalEnd @4 :UInt64;           # native frame in it ran the Python frames up to an entry frame
}

struct Mapping {
  start @0 :UInt64;
  end @1 :UInt64;               # exclusive
  fileOffset @2 :UInt64;        # offset in the file of start
  path @3 :Text;                # as /proc/PID/maps shows it ("[vdso]" for pseudo-files)
  buildId @4 :Data;             # GNU build-id of the mapped file; empty when none or unreadable
  debuglink @5 :Text;           # its .gnu_debuglink file name; empty when none
  # Since 1.10: 1 + the id of its MappedFile, whose path, buildId and
  # debuglink stand for the three above (then empty); 0: those three hold it.
  file @6 :UInt32;
}

# Frame kind 4: samples, plus the stacks and comm strings they introduce.
# Stack and comm ids are global to the file and dense: the stacks of this
# batch get ids firstStackId, firstStackId+1, ...
struct SampleBatch {
  firstStackId @0 :UInt32;
  stacks @1 :List(Stack);
  firstCommId @2 :UInt32;
  comms @3 :List(Text);
  # One entry per sample in every list below (columnar).
  timeDeltaNs @4 :List(Int64);  # from the previous sample, the first from baseTimeNs
  baseTimeNs @5 :UInt64;
  pid @6 :List(UInt32);         # thread group id
  tid @7 :List(UInt32);
  cpu @8 :List(UInt16);
  stackId @9 :List(UInt32);
  commId @10 :List(UInt32);
  # Since 1.2, with --off-cpu; empty when the batch holds none. Per sample:
  # 0 for a sample on CPU; otherwise the sample is an interval off CPU that
  # ended at its time, this long, its stack taken when the thread left.
  blockedNs @11 :List(UInt64);
  blockState @12 :List(UInt8);  # off CPU: 0 runnable (preempted), 1 sleeping (S),
                                # 2 uninterruptible (D), 3 idle kernel thread (I), 4 other
  # Since 1.2, with --wakers; empty when no interval of the batch has one.
  # Per sample: who woke the thread (4294967295 in wakerStackId: nobody
  # known), its stack, pid, tid and comm, ids as for the sample's own.
  wakerStackId @13 :List(UInt32);
  wakerPid @14 :List(UInt32);
  wakerTid @15 :List(UInt32);
  wakerCommId @16 :List(UInt32);
  # Since 1.3, with --call-graph dwarf. Blocks are stackBlockBytes each,
  # ids firstBlockId, firstBlockId+1, ... in order, concatenated in
  # blockData; windows get ids firstWindowId, ... . Per sample (empty when
  # the batch has none): its window, or 4294967295 for none.
  firstBlockId @17 :UInt32;
  blockData @18 :Data;
  firstWindowId @19 :UInt32;
  windows @20 :List(UserWindow);
  windowId @21 :List(UInt32);
  # Since 1.7: the cgroup v2 each sample ran in, an index into this batch's
  # cgroups (each batch lists those its samples use); both empty when no
  # sample of the batch had one (older files, hosts without cgroup v2).
  cgroups @22 :List(Cgroup);
  cgroup @23 :List(UInt32);
  # Since 1.8, per sample: the thread held its CPython interpreter's GIL;
  # empty when no sample of the batch did.
  holdsGil @24 :List(Bool);
  # Since 1.10, per sample: the events a perf event's sample stands for (its
  # period; in frequency mode the kernel adjusts it from sample to sample),
  # 0 for one (a tracepoint's, a probe's, an interval off CPU); empty when
  # every sample of the batch stands for one.
  period @25 :List(UInt64);
}

struct Cgroup {
  id @0 :UInt64;                # the kernel's cgroup id (its directory's inode number)
  path @1 :Text;                # in the cgroup v2 hierarchy ("/system.slice/nginx.service");
                                # "" when it could not be read
}

# A sample's copy of its user stack and registers, for offline unwinding.
# Identical content is stored once: the bytes as blocks aligned to
# absolute addresses (a multiple of stackBlockBytes), so the blocks of
# outer frames, which do not change from sample to sample, are shared.
struct UserWindow {
  regs @0 :List(UInt64);        # values of RecordingInfo.userRegisters
  base @1 :UInt64;              # address of the first byte copied: the stack pointer
  size @2 :UInt32;              # bytes copied from base up
  abi @3 :UInt8;                # 1: 64-bit, 2: 32-bit task (compat), 0: unknown
  blocks @4 :List(UInt32);      # block ids covering [base, base + size), lowest first;
                                # bytes of a block outside that range are 0
}

# A stack's frames by kind (bpf/frame_kind.h numbers the kinds BPF, this
# file and the report share), each list leaf first.
struct Stack {
  kernel @0 :List(UInt64);      # kernel frames; the first entry is the sampled IP
  user @1 :List(UInt64);        # native frames (the frame-pointer walk); the first is the sampled IP
  # Since 1.8: CPython frames, innermost first, two words each: the code
  # object's address (bit 63: the frame is an entry frame, where the C
  # code that called the interpreter resumes), then the instruction index
  # (signed) in the high half and the code object's checksum in the low.
  python @2 :List(UInt64);
  pythonEnd @3 :UInt8;          # how the walk ended: 0 no walk, 1 at the thread's first
                                # frame, 2 no thread state, 3 unreadable, 4 not code, 5 too deep
}

# Frame kind 6: function symbols of one mapped ELF file that sampled
# addresses fall in, each written once, before the batch that first needs
# it; several frames for one build-id add up. They name the recording's
# frames without the binary.
struct ElfSymbols {
  buildId @0 :Data;             # matches Mapping.buildId
  path @1 :Text;                # where it was mapped (for display)
  segments @2 :List(LoadSegment);
  addresses @3 :List(UInt64);   # ELF virtual addresses
  sizes @4 :List(UInt64);       # parallel
  names @5 :List(Text);         # parallel; as in the file (mangled)
}

struct LoadSegment {
  offset @0 :UInt64;            # PT_LOAD p_offset
  vaddr @1 :UInt64;             # p_vaddr
  fileSize @2 :UInt64;          # p_filesz
}

# Frame kind 5: written when recording stops.
struct RecordingEnd {
  endMonotonicNs @0 :UInt64;
  lossCauses @1 :List(Text);    # parallel to lossCounts
  lossCounts @2 :List(UInt64);  # totals over the recording, all CPUs
  lossSampleKept @3 :List(Bool); # parallel; true: the samples were written with part of
                                 # their stack missing; false (or absent, 1.0): dropped
  taskEventsLost @4 :UInt64;    # mapping events the kernel dropped: some maps may be incomplete
}

# Frame kind 8 (format 1.1): symbols of JIT-compiled code from a process's
# perf map (/tmp/perf-PID.map in its own root), read while it was alive:
# those that sampled addresses in anonymous executable memory fall in. Several
# frames for one pid add up.
struct JitSymbols {
  pid @0 :UInt32;
  addresses @1 :List(UInt64);   # absolute addresses in the process
  sizes @2 :List(UInt64);       # parallel
  names @3 :List(Text);         # parallel
}

# Frame kind 7 (format 1.1): losses counted since the previous Losses frame
# (or the start), per CPU and cause, written at most once a second and only
# when something was lost. One entry per (cpu, cause) in each list.
struct Losses {
  timeNs @0 :UInt64;            # CLOCK_MONOTONIC when counted
  cpus @1 :List(UInt16);        # 65535: not tied to a CPU (found by the recorder)
  causes @2 :List(Text);
  counts @3 :List(UInt64);
  sampleKept @4 :List(Bool);    # as RecordingEnd.lossSampleKept
}

# Frame kind 10 (format 1.3): the call frame information of one mapped ELF
# file that dwarf-mode samples run through, so that a report unwinds the
# same without the file. Once per build-id.
struct ElfCfi {
  buildId @0 :Data;             # matches Mapping.buildId
  path @1 :Text;                # where it was mapped (for display)
  segments @2 :List(LoadSegment);
  ehFrameHdrAddress @3 :UInt64; # sh_addr of .eh_frame_hdr; its bytes follow
  ehFrameHdr @4 :Data;
  ehFrameAddress @5 :UInt64;    # sh_addr of .eh_frame
  ehFrame @6 :Data;
  # Format 1.9: only some entries of .eh_frame (ehFrame and ehFrameHdr are
  # empty): those the samples after this frame can unwind through, at their
  # offsets in a section of ehFrameSize bytes. A binary's pieces come over
  # several frames, as samples reach its code; together they are its CFI.
  ehFrameSize @7 :UInt64;
  pieces @8 :List(CfiPiece);
}

# One CIE or FDE of .eh_frame, whole (its length field included).
struct CfiPiece {
  offset @0 :UInt64;            # in .eh_frame
  bytes @1 :Data;
  fde @2 :Bool;                 # an FDE, else a CIE
  pc @3 :UInt64;                # an FDE's first address: its key in .eh_frame_hdr
}

# Frame kind 9 (format 2.0, merged files only): the frames that follow, up to
# the next Source frame, are one input recording's, in its own order: its
# header, kernel symbols, processes, samples and end. Stack and comm ids
# start again from 0 in each source; embedded ElfSymbols apply to all.
struct Source {
  index @0 :UInt32;             # 0, 1, ... in this file
  path @1 :Text;                # the input as given to ebprof-report merge
  versionMajor @2 :UInt16;      # the input's format version
  versionMinor @3 :UInt16;
}

# Frame kind 11 (format 2.2, merged files only): the last frame of a merged
# file, and how many sources it holds. A file cut exactly where a source
# begins reads whole up to there; this frame is what says sources are
# missing.
struct MergeEnd {
  sources @0 :UInt32;
}

# Frame kind 13 (format 1.8): the CPython code objects of one process that
# sampled Python frames ran, read from it while it was alive, each once;
# several frames for one pid add up.
struct PythonCode {
  pid @0 :UInt32;
  codes @1 :List(CodeObject);
}

struct CodeObject {
  address @0 :UInt64;           # in the process, as Stack.python holds it
  checksum @1 :UInt32;          # as Stack.python holds it: a code object at the same
                                # address with another checksum is another function
  qualname @2 :Text;            # co_qualname, UTF-8
  filename @3 :Text;            # co_filename, UTF-8
  firstLine @4 :UInt32;         # co_firstlineno
  lineTable @5 :Data;           # co_linetable, raw (3.11's location table)
}

# Frame kind 12 (format 1.6): another frame again, whole: its 16-byte
# header, with the checksum inverted (so that the search for an intact
# frame after damage never takes it for a frame of its own), then its
# stored payload. The writer copies the frames whose loss costs more than
# their own samples (maps, kernel, binary and JIT symbols, CFI) after the
# next sample batch; a reader passes a copy over when it read the original
# and reads it in its place when the original was damaged.
struct Copy {
  frame @0 :Data;
}
