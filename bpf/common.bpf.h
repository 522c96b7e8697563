/* SPDX-License-Identifier: GPL-2.0 */
/* What every program of ebprof's BPF object shares: the recorder's
 * settings, the maps samples travel and are filtered through, and the
 * helpers that fill and send a record. The maps and settings are defined
 * once, by the unit that defines EBPROF_DEFINE_SHARED (sample.bpf.c); the
 * others see them as extern, and bpftool's static linker joins them into
 * one object. */
#ifndef EBPROF_COMMON_BPF_H
#define EBPROF_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "profile.h"

#define ENOSPC 28 /* vmlinux.h has no errno values */

#ifdef EBPROF_DEFINE_SHARED
#define SHARED
#define SET_TO(value) = value
#else
#define SHARED extern
#define SET_TO(value)
#endif

/* Set by the recorder before load. */
SHARED const volatile bool filter_tgid SET_TO(false);
SHARED const volatile bool filter_tid SET_TO(false);
SHARED const volatile bool filter_cgroup SET_TO(false);
/* Probes and tracepoints fire on every CPU: -C is applied here. */
SHARED const volatile bool filter_cpu SET_TO(false);
/* Send samples through the per-CPU perf buffers rather than the ring buffer
 * (kernels before 5.8, or forced with --transport perfbuf). */
SHARED const volatile bool use_perfbuf SET_TO(false);
/* Ring-buffer fill level, in bytes, above which the reader is woken. Below it
 * records are committed silently and picked up by the reader's periodic
 * poll, which saves a wakeup per sample. */
SHARED const volatile unsigned long long wakeup_bytes SET_TO(0);
/* How much user stack each record copies, with the user registers: SIZE
 * with --call-graph dwarf,SIZE; a little in frame-pointer mode, for the
 * recorder to name the caller of a leaf without a frame pointer. A
 * multiple of 8, at most EBPROF_MAX_USER_STACK. */
SHARED const volatile __u32 user_stack_bytes SET_TO(0);
/* Frame-pointer mode: the stack is copied only where frameless_code says
 * the leaf repair needs it (or does not know yet). */
SHARED const volatile bool stack_for_frameless_only SET_TO(false);

#define RINGBUF_MAP                                                                                \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_RINGBUF);                                                \
		__uint(max_entries, 1 << 20); /* resized by the recorder */                        \
	}
#define PERFBUF_MAP                                                                                \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);                                       \
		__uint(key_size, sizeof(__u32));                                                   \
		__uint(value_size, sizeof(__u32));                                                 \
	}
#define SET_MAP(entries)                                                                           \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(max_entries, entries);                                                      \
		__type(key, __u32);                                                                \
		__type(value, __u8);                                                               \
	}
#define CGROUP_MAP                                                                                 \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);                                           \
		__uint(max_entries, 1);                                                            \
		__type(key, __u32);                                                                \
		__type(value, __u32);                                                              \
	}
#define CPU_MAP                                                                                    \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                                  \
		__uint(max_entries, 1); /* resized by the recorder to the possible CPUs */         \
		__type(key, __u32);                                                                \
		__type(value, __u8);                                                               \
	}
#define LOSSES_MAP                                                                                 \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                                           \
		__uint(max_entries, EBPROF_LOSS_CAUSES);                                           \
		__type(key, __u32);                                                                \
		__type(value, __u64);                                                              \
	}

SHARED RINGBUF_MAP events SEC(".maps");
/* The perf-buffer transport: one slot per CPU, filled by the recorder. */
SHARED PERFBUF_MAP perf_events SEC(".maps");
/* Processes to sample when filter_tgid is set: the targets and, followed
 * through fork, their descendants. Exited ones are removed. */
SHARED SET_MAP(65536) target_tgids SEC(".maps");
/* Threads to sample when filter_tid is set (-t). */
SHARED SET_MAP(4096) target_tids SEC(".maps");
/* The cgroup (v2) to sample when filter_cgroup is set, descendants included. */
SHARED CGROUP_MAP target_cgroup SEC(".maps");
/* CPUs to sample on when filter_cpu is set: nonzero for each one. */
SHARED CPU_MAP target_cpus SEC(".maps");
/* The recorder's answers to EBPROF_CODE_UNKNOWN (profile.h). Least
 * recently used ones make room: a missing answer costs a copy, and is
 * asked for again. */
SHARED struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct ebprof_code_key);
	__type(value, __u64);
} frameless_code SEC(".maps");
/* Samples lost, per CPU and enum ebprof_loss_cause. */
SHARED LOSSES_MAP losses SEC(".maps");

/* Room for one record per CPU: a record is 2 KiB at most, too big for the
 * 512-byte BPF stack. */
#define SCRATCH(name)                                                                              \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                                           \
		__uint(max_entries, 1);                                                            \
		__type(key, __u32);                                                                \
		__type(value, struct ebprof_sample);                                               \
	} name SEC(".maps")

/* A record with room for its copy of the user stack: too big for a per-CPU
 * array (32 KiB at most), so a plain array with a slot per CPU. */
struct ebprof_stack_sample {
	struct ebprof_sample s;
	/* Python frames, then the stack, and the slack the verifier needs. */
	__u8 stack[EBPROF_MAX_USER_STACK + 8 * EBPROF_STACK_CHUNK];
};
#define STACK_SCRATCH_MAP                                                                          \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                                  \
		__uint(max_entries, 1); /* resized by the recorder to the possible CPUs */         \
		__type(key, __u32);                                                                \
		__type(value, struct ebprof_stack_sample);                                         \
	}
/* Records with their stack: a slot per CPU for samples, and one for the
 * switches of --off-cpu, which a sample's interrupt can land in. */
SHARED STACK_SCRATCH_MAP stack_scratch SEC(".maps");
SHARED STACK_SCRATCH_MAP switch_stack_scratch SEC(".maps");

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

static __always_inline void count_stack_losses(__u32 lost)
{
	if (lost & EBPROF_LOST_KERNEL_STACK)
		count_loss(EBPROF_LOSS_KERNEL_STACK);
	if (lost & EBPROF_LOST_USER_STACK)
		count_loss(EBPROF_LOSS_USER_STACK);
	if (lost & EBPROF_LOST_TRUNCATED)
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
 * stacks, noting in s->stack_losses what of them could not be read.
 * Returns the record's size. */
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
	s->cgroup_id = bpf_get_current_cgroup_id();
	s->state = 0;
	s->stack_losses = 0;
	s->peer = 0;
	s->flags = 0;
	s->user_stack_bytes = 0;
	s->user_abi = EBPROF_ABI_NONE;
	s->python_frames = 0;
	s->python_end = 0;
	s->image = 0;
	s->period = 0;
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	kbytes = bpf_get_stack(ctx, s->ips, EBPROF_MAX_FRAMES * sizeof(__u64), 0);
	if (kbytes > 0)
		nk = kbytes / sizeof(__u64);
	else if (kbytes < 0)
		s->stack_losses |= EBPROF_LOST_KERNEL_STACK;
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
			s->stack_losses |= EBPROF_LOST_USER_STACK;
	}
	nu &= 0x7f;
	if (nk == EBPROF_MAX_FRAMES || nu == EBPROF_MAX_FRAMES)
		s->stack_losses |= EBPROF_LOST_TRUNCATED;

	s->kernel_frames = nk;
	s->user_frames = nu;
	return record_size(s);
}

/* Copying the user stack, one chunk per step of bpf_loop (whose callback
 * the verifier checks once, not once per step): the chunk that faults
 * (the stack ends in it) is read again in pieces, so that a fault near
 * the end keeps what could be read. */
struct stack_copy {
	__u64 sp;
	__u32 dst; /* where the stack goes in the slot, from its start */
	__u32 want, got;
	__u32 step; /* EBPROF_STACK_CHUNK, or EBPROF_STACK_PIECE after a fault */
};

/* One step of the copy into the slot of `map` for this CPU. */
#define COPY_STACK_STEP(name, map)                                                                 \
	static long name(__u32 index, struct stack_copy *c)                                        \
	{                                                                                          \
		__u32 cpu = bpf_get_smp_processor_id(), n, at;                                     \
		__u8 *slot = bpf_map_lookup_elem(&map, &cpu);                                      \
                                                                                                   \
		if (!slot || c->got >= c->want)                                                    \
			return 1;                                                                  \
		n = c->want - c->got;                                                              \
		if (n > c->step)                                                                   \
			n = c->step;                                                               \
		/* No-ops at run time: bounds the verifier sees. */                                \
		n &= 2 * EBPROF_STACK_CHUNK - 1;                                                   \
		at = (c->dst & 0x1fff) + (c->got & 0xffff);                                        \
		if (bpf_probe_read_user(slot + at, n, (void *)(c->sp + c->got)) == 0) {            \
			c->got += n;                                                               \
			return 0;                                                                  \
		}                                                                                  \
		if (c->step == EBPROF_STACK_PIECE)                                                 \
			return 1;                                                                  \
		c->step = EBPROF_STACK_PIECE;                                                      \
		return 0;                                                                          \
	}

COPY_STACK_STEP(copy_sample_stack, stack_scratch)
COPY_STACK_STEP(copy_switch_stack, switch_stack_scratch)

/* Whether the leaf repair may need the stack of a sample whose user rip is
 * `ip`: where the recorder said so, or has not said yet (and is asked). */
static __always_inline bool stack_needed(struct ebprof_sample *s, __u64 ip, struct mm_struct *mm)
{
	struct ebprof_code_key key = {
		.tgid = s->tgid,
		.region = ip >> EBPROF_CODE_REGION_SHIFT,
	};
	__u64 *granules;

	if (!stack_for_frameless_only || !mm)
		return true;
	/* x86 numbers every address space once (for its TLBs). */
	key.image = (__u32)mm->context.ctx_id;
	s->image = key.image;
	granules = bpf_map_lookup_elem(&frameless_code, &key);
	if (!granules) {
		s->flags |= EBPROF_CODE_UNKNOWN;
		return true;
	}
	return (*granules >> ((ip >> EBPROF_CODE_GRANULE_SHIFT) & 63)) & 1;
}

/* The current task's user registers and, from its stack pointer up,
 * user_stack_bytes of its user stack, after the frames of `s`: a window
 * with --call-graph dwarf, what the leaf repair reads otherwise. The user
 * registers are at the top of the task's kernel stack whether the sample
 * hit user or kernel code (an interrupt from user mode saves them there
 * too). The main thread's stack is copied no further than where it
 * started (mm->start_stack, just above _start's frame, and a little
 * more): what lies above is argv and the environment. Returns the bytes
 * copied. */
static __always_inline __u32 take_user_window(struct ebprof_stack_sample *w, bool at_switch)
{
#if defined(__TARGET_ARCH_x86)
	struct ebprof_sample *s = &w->s;
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	/* Through BTF pointers: plain loads the kernel guards against faults,
	 * not a helper call each (bpf_probe_read_kernel). */
	__u64 sp = regs->sp;
	struct mm_struct *mm = task->mm;
	__u64 top = mm ? mm->start_stack : 0;
	__u32 want = user_stack_bytes;
	/* Native frames, then two words a Python frame. */
	__u32 nf = ((s->kernel_frames & 0x7f) + (s->user_frames & 0x7f)) +
		   2 * (s->python_frames & 0xff);

	s->user_regs[0] = regs->ip;
	s->user_regs[1] = sp;
	s->user_regs[2] = regs->bp;
	s->user_regs[3] = regs->bx;
	s->user_regs[4] = regs->r10;
	s->user_regs[5] = regs->r12;
	s->user_regs[6] = regs->r13;
	s->user_regs[7] = regs->r14;
	s->user_regs[8] = regs->r15;
	s->user_abi = regs->cs == 0x23 ? EBPROF_ABI_32 : EBPROF_ABI_64;
	if (!stack_needed(s, regs->ip, mm))
		return 0;
	if (top > sp && top - sp + 128 < want)
		want = (top - sp + 128 + 7) & ~7u;
	if (want > EBPROF_MAX_USER_STACK)
		want = EBPROF_MAX_USER_STACK;
	struct stack_copy copy = {
		.sp = sp,
		.dst = __builtin_offsetof(struct ebprof_sample, ips) + nf * sizeof(__u64),
		.want = want,
		.step = EBPROF_STACK_CHUNK,
	};

	const __u32 steps = EBPROF_MAX_USER_STACK / EBPROF_STACK_CHUNK +
			    EBPROF_STACK_CHUNK / EBPROF_STACK_PIECE + 1;

	if (at_switch)
		bpf_loop(steps, copy_switch_stack, &copy, 0);
	else
		bpf_loop(steps, copy_sample_stack, &copy, 0);
	s->user_stack_bytes = copy.got;
	return s->user_stack_bytes;
#else
	return 0;
#endif
}

/* Sends a record to the recorder, through the ring buffer or this CPU's
 * perf buffer; counts it as lost when there is no room. With `wake`, the
 * recorder is woken now rather than at its next poll. */
static __always_inline void emit_waking(void *ctx, struct ebprof_sample *s, __u64 size, bool wake)
{
	__u64 flags = wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;

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

static __always_inline void emit(void *ctx, struct ebprof_sample *s, __u64 size)
{
	emit_waking(ctx, s, size, false);
}

#endif
