// SPDX-License-Identifier: GPL-2.0
/* Stack sampler: on every perf event, tracepoint hit or probe hit, copy the
 * kernel and user stacks of the current task into one record of the ring
 * buffer (or of this CPU's perf buffer). No BPF stack map is used:
 * STACK_TRACE maps drop stacks on hash collisions, and interning is cheaper
 * and lossless in user space. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "profile.h"

char LICENSE[] SEC("license") = "GPL";

#define ENOSPC 28 /* vmlinux.h has no errno values */

/* Set by the recorder before load. */
const volatile bool filter_tgid = false;
const volatile bool filter_tid = false;
const volatile bool filter_cgroup = false;
/* Probes and tracepoints fire on every CPU: -C is applied here. */
const volatile bool filter_cpu = false;
/* Send samples through the per-CPU perf buffers rather than the ring buffer
 * (kernels before 5.8, or forced with --transport perfbuf). */
const volatile bool use_perfbuf = false;
/* Ring-buffer fill level, in bytes, above which the reader is woken. Below it
 * records are committed silently and picked up by the reader's periodic
 * poll, which saves a wakeup per sample. */
const volatile unsigned long long wakeup_bytes = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized by the recorder */
} events SEC(".maps");

/* The perf-buffer transport: one slot per CPU, filled by the recorder. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} perf_events SEC(".maps");

/* Processes to sample when filter_tgid is set: the targets and, followed
 * through fork, their descendants. Exited ones are removed. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} target_tgids SEC(".maps");

/* Threads to sample when filter_tid is set (-t). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} target_tids SEC(".maps");

/* The cgroup (v2) to sample when filter_cgroup is set, descendants included. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} target_cgroup SEC(".maps");

/* CPUs to sample on when filter_cpu is set: nonzero for each one. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized by the recorder to the possible CPUs */
	__type(key, __u32);
	__type(value, __u8);
} target_cpus SEC(".maps");

/* Room for one record per CPU: a record is 2 KiB at most, too big for the
 * 512-byte BPF stack. */
#define SCRATCH(name)                                                                              \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                                           \
		__uint(max_entries, 1);                                                            \
		__type(key, __u32);                                                                \
		__type(value, struct ebprof_sample);                                               \
	} name SEC(".maps")

SCRATCH(scratch);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EBPROF_LOSS_CAUSES);
	__type(key, __u32);
	__type(value, __u64);
} losses SEC(".maps");

static __always_inline void count_loss(__u32 cause)
{
	__u64 *n = bpf_map_lookup_elem(&losses, &cause);

	if (n)
		*n += 1; /* per-CPU slot: no atomic needed */
}

/* Whether the current task is one the recorder asked for (-p, -t, -G, -C). */
static __always_inline bool wanted(__u32 tgid, __u32 tid)
{
	if (filter_tgid && !bpf_map_lookup_elem(&target_tgids, &tgid))
		return false;
	if (filter_tid && !bpf_map_lookup_elem(&target_tids, &tid))
		return false;
	if (filter_cgroup && bpf_current_task_under_cgroup(&target_cgroup, 0) != 1)
		return false;
	if (filter_cpu) {
		__u32 cpu = bpf_get_smp_processor_id();
		__u8 *on = bpf_map_lookup_elem(&target_cpus, &cpu);

		if (!on || !*on)
			return false;
	}
	return true;
}

/* Bits of ebprof_sample.reserved: stack losses of a record, counted when it
 * is sent (an off-CPU record may never be). */
#define LOST_KERNEL_STACK (1 << 0)
#define LOST_USER_STACK	  (1 << 1)
#define LOST_TRUNCATED	  (1 << 2)

static __always_inline void count_stack_losses(__u32 lost)
{
	if (lost & LOST_KERNEL_STACK)
		count_loss(EBPROF_LOSS_KERNEL_STACK);
	if (lost & LOST_USER_STACK)
		count_loss(EBPROF_LOSS_USER_STACK);
	if (lost & LOST_TRUNCATED)
		count_loss(EBPROF_LOSS_TRUNCATED);
}

/* A record's bytes: the header and the frames it holds. The masks are no-ops
 * at run time (counts are at most 127); they bound the size for the
 * verifier. */
static __always_inline __u64 record_size(const struct ebprof_sample *s)
{
	return EBPROF_SAMPLE_HEADER_SIZE +
	       ((s->kernel_frames & 0x7f) + (s->user_frames & 0x7f)) * sizeof(__u64);
}

/* Fills `s` with the current task: who, where, and its kernel and user
 * stacks, noting in s->reserved what of them could not be read. Returns the
 * record's size. */
static __always_inline __u64 fill_current(void *ctx, struct ebprof_sample *s, __u32 tgid, __u32 tid,
					  __u16 kind)
{
	long kbytes, ubytes;
	__u32 nk = 0, nu = 0;

	s->time_ns = bpf_ktime_get_ns();
	s->tgid = tgid;
	s->tid = tid;
	s->cpu = bpf_get_smp_processor_id();
	s->kind = kind;
	s->blocked_ns = 0;
	s->state = 0;
	s->reserved = 0;
	s->peer = 0;
	s->flags = 0;
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	kbytes = bpf_get_stack(ctx, s->ips, EBPROF_MAX_FRAMES * sizeof(__u64), 0);
	if (kbytes > 0)
		nk = kbytes / sizeof(__u64);
	else if (kbytes < 0)
		s->reserved |= LOST_KERNEL_STACK;
	/* A no-op at run time (nk <= 127); it proves to the verifier that the
	 * user stack below stays inside ips. */
	nk &= 0x7f;

	/* Kernel threads have no user stack; asking would only fail. */
	if (tgid != 0) {
		ubytes = bpf_get_stack(ctx, &s->ips[nk], EBPROF_MAX_FRAMES * sizeof(__u64),
				       BPF_F_USER_STACK);
		if (ubytes > 0)
			nu = ubytes / sizeof(__u64);
		else if (ubytes < 0)
			s->reserved |= LOST_USER_STACK;
	}
	nu &= 0x7f;
	if (nk == EBPROF_MAX_FRAMES || nu == EBPROF_MAX_FRAMES)
		s->reserved |= LOST_TRUNCATED;

	s->kernel_frames = nk;
	s->user_frames = nu;
	return record_size(s);
}

/* Sends a record to the recorder, through the ring buffer or this CPU's
 * perf buffer; counts it as lost when there is no room. */
static __always_inline void emit(void *ctx, struct ebprof_sample *s, __u64 size)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (use_perfbuf) {
		/* Wakeups are the perf event's watermark. */
		long err = bpf_perf_event_output(ctx, &perf_events, BPF_F_CURRENT_CPU, s, size);

		if (err)
			count_loss(err == -ENOSPC ? EBPROF_LOSS_RINGBUF_FULL : EBPROF_LOSS_OUTPUT);
		return;
	}
	if (wakeup_bytes && bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, s, size, flags))
		count_loss(EBPROF_LOSS_RINGBUF_FULL);
}

/* Takes the stacks of the current task into one record. Shared by the
 * programs below, which differ only in what their context is. */
static __always_inline int take_stack(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	__u32 tid = (__u32)id;
	__u32 zero = 0;
	struct ebprof_sample *s;
	__u64 size;

	if (!wanted(tgid, tid))
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	size = fill_current(ctx, s, tgid, tid, EBPROF_KIND_SAMPLE);
	count_stack_losses(s->reserved);
	emit(ctx, s, size);
	return 0;
}

/* A sampling perf event (-e cpu-clock, cycles, ...). */
SEC("perf_event")
int sample_stack(struct bpf_perf_event_data *ctx)
{
	return take_stack(ctx);
}

/* Every hit of a tracepoint (-e tracepoint:CATEGORY:NAME). */
SEC("tracepoint")
int tracepoint_stack(void *ctx)
{
	return take_stack(ctx);
}

/* Every call of a probed function (-e kprobe:SYMBOL, uprobe:PATH:SYMBOL). */
SEC("kprobe")
int probe_stack(struct pt_regs *ctx)
{
	return take_stack(ctx);
}

/* Like perf's inherited events: a target's children are targets too. Raw
 * tracepoints rather than tp_btf, which not every kernel offers. */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = BPF_CORE_READ(parent, tgid);
	__u32 child_tgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (child_tgid != parent_tgid && bpf_map_lookup_elem(&target_tgids, &parent_tgid))
		bpf_map_update_elem(&target_tgids, &child_tgid, &one, BPF_ANY);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(forget_exited, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	/* Only the last thread's exit ends the process; the leader can exit
	 * (pthread_exit in main) while others run on. do_exit() has already
	 * counted this thread out of signal->live. */
	if (BPF_CORE_READ(task, signal, live.counter) == 0)
		bpf_map_delete_elem(&target_tgids, &tgid);
	return 0;
}

/* Off-CPU time (--off-cpu): each thread's switch out is remembered with its
 * stacks; when it runs again, the interval is sent with its length. One
 * record per blocked interval, not an in-kernel sum: every interval keeps
 * its time, and nothing is lost to a stack-map collision. */
const volatile __u64 min_block_ns = 1;
const volatile __u64 max_block_ns = ~0ULL;
const volatile __u32 state_mask = (1 << EBPROF_BLOCK_STATES) - 1;
const volatile bool user_threads_only = false;
const volatile bool kernel_threads_only = false;
const volatile bool wakers = false; /* --wakers */

/* A table of records by tid. Not preallocated where the recorder allows it
 * (tp_btf): memory follows the threads that block. The recorder sizes it,
 * and preallocates it for the other hooks. */
#define TID_TABLE(name)                                                                            \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(max_entries, 16384);                                                        \
		__uint(map_flags, BPF_F_NO_PREALLOC);                                              \
		__type(key, __u32);                                                                \
		__type(value, struct ebprof_sample);                                               \
	} name SEC(".maps")

/* Threads off CPU: their record as it will be sent, minus the time. */
TID_TABLE(off_cpu_start);
/* Wakers of threads off CPU (--wakers), by the woken tid: the waker's
 * record, sent after the interval it ended. */
TID_TABLE(off_cpu_waker);

/* Its own scratch: a switch never runs inside a sample, but keep them apart. */
SCRATCH(off_cpu_scratch);

#define TASK_INTERRUPTIBLE   0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_DEAD	     0x0080
#define TASK_NOLOAD	     0x0400
#define PF_KTHREAD	     0x00200000

/* Kernels before 5.14 call the field `state`. */
struct task_struct___pre_5_14 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline long task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre_5_14 *)t, state);
}

/* The kernel's scheduler state bits as __schedule() read them. */
static __always_inline __u32 switch_state(bool preempt, long state)
{
	if (preempt || state == 0)
		return EBPROF_BLOCK_RUNNABLE;
	if ((state & TASK_NOLOAD) && (state & TASK_UNINTERRUPTIBLE))
		return EBPROF_BLOCK_IDLE;
	if (state & TASK_INTERRUPTIBLE)
		return EBPROF_BLOCK_SLEEP;
	if (state & TASK_UNINTERRUPTIBLE)
		return EBPROF_BLOCK_UNINTERRUPTIBLE;
	return EBPROF_BLOCK_OTHER;
}

/* The same from the sched:sched_switch tracepoint, which reports a state
 * index as a bit (TASK_REPORT: S 0x1, D 0x2, X 0x10, Z 0x20, I 0x80) and a
 * preemption as TASK_REPORT_MAX (0x100). */
static __always_inline __u32 reported_state(long state)
{
	if (state == 0 || (state & 0x100))
		return EBPROF_BLOCK_RUNNABLE;
	if (state & 0x80)
		return EBPROF_BLOCK_IDLE;
	if (state & 0x1)
		return EBPROF_BLOCK_SLEEP;
	if (state & 0x2)
		return EBPROF_BLOCK_UNINTERRUPTIBLE;
	return EBPROF_BLOCK_OTHER;
}

/* Whether sched_switch passes prev_state as its 4th argument (Linux 5.18+),
 * which is what __schedule() saw; before, it is read from the task. Set by
 * the recorder from the kernel's BTF. */
const volatile bool switch_has_prev_state = false;

/* `prev` (the current task) leaves the CPU in `state` (enum
 * ebprof_block_state), or for good when `dead`; the thread `next_tid`
 * takes it. */
static __always_inline int on_switch(void *ctx, struct task_struct *prev, __u32 state, bool dead,
				     __u32 next_tid)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0;
	struct ebprof_sample *s;
	bool kthread;

	/* The thread coming back: its interval ends here. */
	s = next_tid ? bpf_map_lookup_elem(&off_cpu_start, &next_tid) : NULL;
	if (s) {
		__u64 now = bpf_ktime_get_ns();
		__u64 blocked = now - s->time_ns;

		struct ebprof_sample *w =
			wakers ? bpf_map_lookup_elem(&off_cpu_waker, &next_tid) : NULL;

		if (blocked >= min_block_ns && blocked <= max_block_ns) {
			s->time_ns = now;
			s->blocked_ns = blocked;
			s->cpu = bpf_get_smp_processor_id();
			s->flags = w ? EBPROF_WAKER_FOLLOWS : 0;
			count_stack_losses(s->reserved);
			emit(ctx, s, record_size(s));
			if (w) {
				w->time_ns = now;
				w->peer = next_tid;
				emit(ctx, w, record_size(w));
			}
		}
		if (w)
			bpf_map_delete_elem(&off_cpu_waker, &next_tid);
		bpf_map_delete_elem(&off_cpu_start, &next_tid);
	}

	/* The thread leaving: its interval starts, with its stacks as they are.
	 * The idle task never blocks, and a dead one never comes back. */
	if (tid == 0 || dead || BPF_CORE_READ(prev, exit_state))
		return 0;
	if (!(state_mask & (1u << state)))
		return 0;
	kthread = BPF_CORE_READ(prev, flags) & PF_KTHREAD;
	if ((user_threads_only && kthread) || (kernel_threads_only && !kthread))
		return 0;
	if (!wanted(tgid, tid))
		return 0;
	s = bpf_map_lookup_elem(&off_cpu_scratch, &zero);
	if (!s)
		return 0;
	fill_current(ctx, s, tgid, tid, EBPROF_KIND_OFF_CPU);
	s->state = state;
	if (bpf_map_update_elem(&off_cpu_start, &tid, s, BPF_ANY))
		count_loss(EBPROF_LOSS_OFF_CPU_FULL);
	return 0;
}

/* Three ways to see a switch, best first; the recorder loads the one this
 * kernel attaches (BTF tracing programs are not built into every kernel). */
static __always_inline int on_raw_switch(unsigned long long *ctx, bool preempt,
					 struct task_struct *prev, struct task_struct *next)
{
	long state = switch_has_prev_state ? (long)ctx[3] : task_state(prev);

	return on_switch(ctx, prev, switch_state(preempt, state), state & TASK_DEAD,
			 BPF_CORE_READ(next, pid));
}

SEC("tp_btf/sched_switch")
int BPF_PROG(off_cpu_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_raw_switch(ctx, preempt, prev, next);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(off_cpu_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_raw_switch(ctx, preempt, prev, next);
}

SEC("tracepoint/sched/sched_switch")
int off_cpu_tp(struct trace_event_raw_sched_switch *ctx)
{
	long state = ctx->prev_state;

	return on_switch(ctx, (struct task_struct *)bpf_get_current_task(), reported_state(state),
			 state & (0x10 | 0x20), ctx->next_pid);
}

/* A wakeup can come from an interrupt: its own scratch. */
SCRATCH(waker_scratch);

/* --wakers: a thread remembered off CPU is being woken; the current task
 * (the waker, or whatever an interrupt that wakes it interrupted) is taken
 * with its stacks, to be sent after the interval. */
static __always_inline int on_wakeup(void *ctx, __u32 wakee)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0;
	struct ebprof_sample *w;

	if (!bpf_map_lookup_elem(&off_cpu_start, &wakee))
		return 0;
	w = bpf_map_lookup_elem(&waker_scratch, &zero);
	if (!w)
		return 0;
	fill_current(ctx, w, id >> 32, (__u32)id, EBPROF_KIND_WAKER);
	w->reserved = 0; /* its stack losses are not a sample's */
	if (bpf_map_update_elem(&off_cpu_waker, &wakee, w, BPF_ANY))
		count_loss(EBPROF_LOSS_OFF_CPU_FULL);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(waker_btf, struct task_struct *p)
{
	return on_wakeup(ctx, BPF_CORE_READ(p, pid));
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(waker_raw, struct task_struct *p)
{
	return on_wakeup(ctx, BPF_CORE_READ(p, pid));
}

SEC("tracepoint/sched/sched_wakeup")
int waker_tp(struct trace_event_raw_sched_wakeup_template *ctx)
{
	return on_wakeup(ctx, ctx->pid);
}
