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

/* A sample is 2 KiB at most: too big for the 512-byte BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ebprof_sample);
} scratch SEC(".maps");

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

/* Takes the stacks of the current task into one record. Shared by the
 * programs below, which differ only in what their context is. */
static __always_inline int take_stack(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	__u32 tid = (__u32)id;
	__u32 zero = 0;
	struct ebprof_sample *s;
	long kbytes, ubytes;
	__u32 nk = 0, nu = 0;
	__u64 size, flags = BPF_RB_NO_WAKEUP;

	if (filter_tgid && !bpf_map_lookup_elem(&target_tgids, &tgid))
		return 0;
	if (filter_tid && !bpf_map_lookup_elem(&target_tids, &tid))
		return 0;
	if (filter_cgroup && bpf_current_task_under_cgroup(&target_cgroup, 0) != 1)
		return 0;
	if (filter_cpu) {
		__u32 cpu = bpf_get_smp_processor_id();
		__u8 *on = bpf_map_lookup_elem(&target_cpus, &cpu);

		if (!on || !*on)
			return 0;
	}

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;

	s->time_ns = bpf_ktime_get_ns();
	s->tgid = tgid;
	s->tid = tid;
	s->cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	kbytes = bpf_get_stack(ctx, s->ips, EBPROF_MAX_FRAMES * sizeof(__u64), 0);
	if (kbytes > 0)
		nk = kbytes / sizeof(__u64);
	else if (kbytes < 0)
		count_loss(EBPROF_LOSS_KERNEL_STACK);
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
			count_loss(EBPROF_LOSS_USER_STACK);
	}
	nu &= 0x7f;
	if (nk == EBPROF_MAX_FRAMES || nu == EBPROF_MAX_FRAMES)
		count_loss(EBPROF_LOSS_TRUNCATED);

	s->kernel_frames = nk;
	s->user_frames = nu;
	size = EBPROF_SAMPLE_HEADER_SIZE + (nk + nu) * sizeof(__u64);

	if (use_perfbuf) {
		/* Wakeups are the perf event's watermark. */
		long err = bpf_perf_event_output(ctx, &perf_events, BPF_F_CURRENT_CPU, s, size);

		if (err)
			count_loss(err == -ENOSPC ? EBPROF_LOSS_RINGBUF_FULL : EBPROF_LOSS_OUTPUT);
		return 0;
	}
	if (wakeup_bytes && bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, s, size, flags))
		count_loss(EBPROF_LOSS_RINGBUF_FULL);
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
