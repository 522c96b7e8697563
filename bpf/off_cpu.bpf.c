// SPDX-License-Identifier: GPL-2.0
/* Off-CPU time (--off-cpu) and, with --wakers, who ended each wait. */
#include "common.bpf.h"
#include "python.bpf.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

/* Each thread's switch out is remembered with its
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

PYTHON_STEP(python_switch_step, switch_stack_scratch)

/* The leaving thread's Python frames, user registers and stack, sent now:
 * too large to keep in off_cpu_start until the interval ends. Its
 * interval's record names it by the time it left. */
static __always_inline void send_switch_window(void *ctx, const struct ebprof_sample *left)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct ebprof_stack_sample *w = bpf_map_lookup_elem(&switch_stack_scratch, &cpu);
	bool wake = false;
	__u64 size;

	if (!w)
		return;
	w->s.time_ns = left->time_ns;
	w->s.tgid = left->tgid;
	w->s.tid = left->tid;
	w->s.cpu = left->cpu;
	w->s.kind = EBPROF_KIND_SWITCH_WINDOW;
	w->s.kernel_frames = w->s.user_frames = 0;
	w->s.blocked_ns = 0;
	w->s.cgroup_id = left->cgroup_id;
	w->s.state = w->s.stack_losses = w->s.peer = w->s.flags = 0;
	w->s.user_stack_bytes = 0;
	w->s.user_abi = EBPROF_ABI_NONE;
	w->s.image = 0;
	__builtin_memcpy(w->s.comm, left->comm, sizeof(w->s.comm));
	size = EBPROF_SAMPLE_HEADER_SIZE +
	       take_python_frames(w, left->tgid, left->tid, 1, python_switch_step, &wake);
	if (user_stack_bytes)
		size += take_user_window(w, true);
	if (size <= sizeof(*w))
		emit_waking(ctx, &w->s, size, wake);
}

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
			count_stack_losses(s->stack_losses);
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
	if (bpf_map_update_elem(&off_cpu_start, &tid, s, BPF_ANY)) {
		count_loss(EBPROF_LOSS_OFF_CPU_FULL);
		return 0;
	}
	if (tgid && (user_stack_bytes || bpf_map_lookup_elem(&python_procs, &tgid)))
		send_switch_window(ctx, s);
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
 * with its stacks, to be sent after the interval. On sched_waking, which
 * try_to_wake_up() fires in the waker's context: sched_wakeup fires where
 * the wakee is activated, which for a wakee on an idle CPU is that CPU's
 * IPI, with whatever task happens to run there. */
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
	w->stack_losses = 0; /* its stack losses are not a sample's */
	if (bpf_map_update_elem(&off_cpu_waker, &wakee, w, BPF_ANY))
		count_loss(EBPROF_LOSS_OFF_CPU_FULL);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(waker_btf, struct task_struct *p)
{
	return on_wakeup(ctx, BPF_CORE_READ(p, pid));
}

SEC("raw_tp/sched_waking")
int BPF_PROG(waker_raw, struct task_struct *p)
{
	return on_wakeup(ctx, BPF_CORE_READ(p, pid));
}

SEC("tracepoint/sched/sched_waking")
int waker_tp(struct trace_event_raw_sched_wakeup_template *ctx)
{
	return on_wakeup(ctx, ctx->pid);
}
