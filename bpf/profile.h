/* The record layout shared by profile.bpf.c and ebprof-record. It is an ABI
 * between the two halves of one binary, never written to disk: the recorder
 * decodes it into format/ structs. Fixed-width types only, no includes, so
 * both the BPF and the C++ compiler read it the same way. */
#ifndef EBPROF_BPF_PROFILE_H
#define EBPROF_BPF_PROFILE_H

/* The kernel's own cap on a callchain (PERF_MAX_STACK_DEPTH). */
#define EBPROF_MAX_FRAMES 127
#define EBPROF_COMM_LEN	  16

/* --call-graph dwarf: the user registers CFI unwinding needs (x86-64, in
 * this order: rip, rsp, rbp, rbx, r10, r12, r13, r14, r15: the return
 * address, the stack and frame pointers, the callee-saved registers, and
 * the one GCC's stack-realigning prologues keep the CFA in), and the most
 * stack a sample copies, perf's limit. */
#define EBPROF_USER_REGS      9
#define EBPROF_MAX_USER_STACK 65528
/* The stack is copied in chunks, and a chunk that faults (the stack ends
 * in it) again in pieces, so that a fault near the end keeps what was read. */
#define EBPROF_STACK_CHUNK 1024
#define EBPROF_STACK_PIECE 64
/* The most interpreter frames a record holds (a recursion 100 deep fits). */
#define EBPROF_MAX_PY_FRAMES 160

/* ebprof_sample.user_abi: what the registers and stack are. */
enum ebprof_abi {
	EBPROF_ABI_NONE = 0, /* no registers: frame-pointer mode, or a kernel thread */
	EBPROF_ABI_64 = 1,
	EBPROF_ABI_32 = 2, /* a 32-bit (compat) task: its stack is not unwound */
};

/* Why a sample, or part of one, was lost. Indexes the per-CPU losses map. */
enum ebprof_loss_cause {
	EBPROF_LOSS_RINGBUF_FULL = 0, /* no room in the ring or perf buffer: sample dropped */
	EBPROF_LOSS_KERNEL_STACK = 1, /* bpf_get_stack failed for the kernel stack */
	EBPROF_LOSS_USER_STACK = 2,   /* bpf_get_stack failed for the user stack */
	EBPROF_LOSS_TRUNCATED = 3,    /* a half of the stack filled all EBPROF_MAX_FRAMES */
	EBPROF_LOSS_OUTPUT = 4,	      /* the perf buffer refused the record for another reason */
	EBPROF_LOSS_OFF_CPU_FULL = 5, /* no room to remember a thread's switch out: interval lost */
	EBPROF_LOSS_CAUSES = 6,
};

/* What a record is. */
enum ebprof_kind {
	EBPROF_KIND_SAMPLE = 0,	       /* a stack on a perf event, tracepoint or probe */
	EBPROF_KIND_OFF_CPU = 1,       /* a thread's time off CPU, with its stack when it left */
	EBPROF_KIND_WAKER = 2,	       /* who woke the thread of the off-CPU record just before it
					* from this CPU (--wakers): peer is that thread */
	EBPROF_KIND_SWITCH_WINDOW = 3, /* a thread's user registers and stack as it left the
					* CPU (--off-cpu): its interval's, which ends later
					* with the time_ns - blocked_ns of this time_ns */
};

/* ebprof_sample.stack_losses: what of a record's stacks could not be read.
 * BPF counts them (as EBPROF_LOSS_*) when it sends the record, since an
 * off-CPU record may never be sent; user space needs no more than the
 * frame counts. */
#define EBPROF_LOST_KERNEL_STACK (1 << 0)
#define EBPROF_LOST_USER_STACK	 (1 << 1)
#define EBPROF_LOST_TRUNCATED	 (1 << 2)

/* ebprof_sample.flags of an off-CPU record: its waker's record follows. */
#define EBPROF_WAKER_FOLLOWS 1
/* ebprof_sample.flags: the thread held the GIL of its Python interpreter. */
#define EBPROF_HOLDS_GIL 2
/* ebprof_sample.flags: the stack was copied because frameless_code has no
 * answer yet for the code at the user rip; the recorder then gives one. */
#define EBPROF_CODE_UNKNOWN 4

/* Frame-pointer mode copies a little user stack only for samples whose
 * user rip is in code without a frame pointer set up (libc built without
 * them, any function's first and last instructions): there the leaf
 * repair needs it. The recorder learns that from the binaries' CFI and
 * answers in the map frameless_code: per process image and 1 KiB region
 * of code, a bit per 16 bytes, set where the stack is needed. The image is
 * the task's address space (its mm's context id, which x86 never reuses),
 * so that an exec or a reused pid never sees the answers for other code. */
#define EBPROF_CODE_REGION_SHIFT  10
#define EBPROF_CODE_GRANULE_SHIFT 4
struct ebprof_code_key {
	unsigned int tgid;
	unsigned int image;	   /* ebprof_sample.image */
	unsigned long long region; /* user rip >> EBPROF_CODE_REGION_SHIFT */
};

/* How a walk of CPython's frames ended (ebprof_sample.python_end). */
enum ebprof_python_end {
	EBPROF_PY_NONE = 0,	  /* not a Python process the recorder knows */
	EBPROF_PY_COMPLETE = 1,	  /* at the thread's first frame */
	EBPROF_PY_NO_THREAD = 2,  /* no thread state: not a Python thread, or not yet one */
	EBPROF_PY_UNREADABLE = 3, /* a read of the process's memory failed */
	EBPROF_PY_NOT_CODE = 4,	  /* a frame whose code is no code object: the walk stops */
	EBPROF_PY_TOO_DEEP = 5,	  /* more than EBPROF_MAX_PY_FRAMES frames */
	EBPROF_PY_ENDS = 6,
};

/* Where CPython keeps what the walk reads, for one process (the map
 * python_procs, by tgid), as the recorder found it: the addresses of
 * _PyRuntime and PyCode_Type, and the offsets of its version's layout
 * (the recorder's table has a row per version). */
struct ebprof_python_proc {
	unsigned long long runtime;	  /* &_PyRuntime */
	unsigned long long code_type;	  /* &PyCode_Type */
	unsigned long long wake_until_ns; /* every sample wakes the recorder until then */
	unsigned int tsd_offset;       /* from fsbase: glibc's pthread_getspecific slot 0's value */
	unsigned short tstate_current; /* in _PyRuntime: the thread state holding the GIL */
	unsigned short tss_key;	       /* in _PyRuntime: the pthread key of each thread's state */
	unsigned short thread_id;      /* in PyThreadState: its native thread id */
	unsigned short thread_cframe;  /* in PyThreadState: its _PyCFrame */
	unsigned short cframe_frame;   /* in _PyCFrame: the current _PyInterpreterFrame */
	unsigned short frame_code;     /* in _PyInterpreterFrame: f_code */
	unsigned short frame_previous; /* previous */
	unsigned short frame_instr;    /* prev_instr */
	unsigned short frame_entry;    /* is_entry (a byte) */
	unsigned short frame_owner;    /* owner (a byte) */
	unsigned short code_flags;     /* in PyCodeObject: co_flags (an int) */
	unsigned short code_argcount;
	unsigned short code_kwonly;
	unsigned short code_firstline;
	unsigned short code_name;     /* co_name: its str object's address goes into the checksum */
	unsigned short code_bytecode; /* where the instructions start (tp_basicsize) */
	unsigned short max_owner;     /* the highest frame owner a walk goes through */
};

/* One interpreter frame in a record: the code object's address with the
 * entry flag in its top bit, then the instruction index (lasti, signed) in
 * the high half and a checksum of the code object's fixed fields (argument
 * counts, flags, first line, its name's address) in the low half. */
#define EBPROF_PY_ENTRY (1ULL << 63)

/* Why a thread left the CPU (--off-cpu), from its state at the switch. */
enum ebprof_block_state {
	EBPROF_BLOCK_RUNNABLE = 0,	  /* preempted or yielded: still runnable */
	EBPROF_BLOCK_SLEEP = 1,		  /* interruptible sleep (S) */
	EBPROF_BLOCK_UNINTERRUPTIBLE = 2, /* uninterruptible sleep (D) */
	EBPROF_BLOCK_IDLE = 3,		  /* TASK_IDLE: a kernel thread waiting for work */
	EBPROF_BLOCK_OTHER = 4,		  /* stopped, traced, parked, ... */
	EBPROF_BLOCK_STATES = 5,
};

/* One record as sent through the ring or perf buffer. Only the header and the
 * kernel_frames + user_frames used entries of ips are sent: kernel frames
 * first (leaf first), then user frames (leaf first), of the kinds
 * EBPROF_FRAME_KERNEL and EBPROF_FRAME_NATIVE (frame_kind.h); then the
 * python_frames interpreter frames (EBPROF_FRAME_PYTHON), two words each,
 * innermost first; then, with
 * --call-graph dwarf, user_stack_bytes of the user stack from its stack
 * pointer up. */
struct ebprof_sample {
	unsigned long long
		time_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns); off CPU: when it ran again */
	unsigned int tgid;
	unsigned int tid;
	unsigned short cpu;
	unsigned short kind; /* enum ebprof_kind */
	unsigned short kernel_frames;
	unsigned short user_frames;
	char comm[EBPROF_COMM_LEN];
	unsigned long long blocked_ns; /* off CPU: how long, up to time_ns */
	unsigned long long cgroup_id;  /* the task's cgroup v2 (its directory's inode); its
					* root's on a host without a v2 hierarchy */
	unsigned int state;	       /* off CPU: enum ebprof_block_state */
	unsigned int stack_losses;     /* EBPROF_LOST_*: what of the stacks could not be read */
	unsigned int peer;	       /* waker: the thread it woke */
	unsigned int flags; /* EBPROF_WAKER_FOLLOWS, EBPROF_HOLDS_GIL, EBPROF_CODE_UNKNOWN */
	unsigned int user_stack_bytes; /* --call-graph dwarf: stack bytes after the frames */
	unsigned int user_abi;	       /* enum ebprof_abi of user_regs */
	unsigned short python_frames;  /* interpreter frames after the native ones */
	unsigned short python_end;     /* enum ebprof_python_end */
	unsigned int image; /* EBPROF_CODE_UNKNOWN: the task's address space (ebprof_code_key) */
	unsigned long long period; /* a perf event's sample: the events it stands for; 0: one */
	unsigned long long user_regs[EBPROF_USER_REGS];
	unsigned long long ips[2 * EBPROF_MAX_FRAMES];
};

#define EBPROF_SAMPLE_HEADER_SIZE 168

#endif
