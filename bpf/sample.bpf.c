// SPDX-License-Identifier: GPL-2.0
/* Stack sampler: on every perf event, tracepoint hit or probe hit, copy the
 * kernel and user stacks of the current task into one record of the ring
 * buffer (or of this CPU's perf buffer). No BPF stack map is used:
 * STACK_TRACE maps drop stacks on hash collisions, and interning is cheaper
 * and lossless in user space.
 *
 * This unit also defines what common.bpf.h declares for all of them. */
#define EBPROF_DEFINE_SHARED
#include "common.bpf.h"
#include "python.bpf.h"

char LICENSE[] SEC("license") = "GPL";

PYTHON_STEP(python_sample_step, stack_scratch)

/* Takes the stacks of the current task into one record, with its user
 * registers and user_stack_bytes of its user stack (all a leaf repair
 * needs, or a whole window with --call-graph dwarf). Shared by the
 * programs below, which differ only in what their context is. A perf
 * event's sample stands for `period` events (in frequency mode the kernel
 * changes it from sample to sample); 0 for one. */
static __always_inline int take_stack(void *ctx, __u64 period)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	__u32 tid = (__u32)id;
	__u32 cpu = bpf_get_smp_processor_id();
	struct ebprof_stack_sample *w;
	bool wake = false;
	__u64 size;

	if (!wanted(tgid, tid))
		return 0;
	w = bpf_map_lookup_elem(&stack_scratch, &cpu);
	if (!w)
		return 0;
	size = fill_current(ctx, &w->s, tgid, tid, EBPROF_KIND_SAMPLE);
	w->s.period = period;
	if (tgid != 0)
		size += take_python_frames(w, tgid, tid, 0, python_sample_step, &wake);
	if (tgid != 0 && user_stack_bytes)
		size += take_user_window(w, false);
	count_stack_losses(w->s.stack_losses);
	if (size <= sizeof(*w))
		emit_waking(ctx, &w->s, size, wake);
	return 0;
}

/* A sampling perf event (-e cpu-clock, cycles, ...). */
SEC("perf_event")
int sample_stack(struct bpf_perf_event_data *ctx)
{
	return take_stack(ctx, ctx->sample_period);
}

/* Every hit of a tracepoint (-e tracepoint:CATEGORY:NAME). */
SEC("tracepoint")
int tracepoint_stack(void *ctx)
{
	return take_stack(ctx, 0);
}

/* Every call of a probed function (-e kprobe:SYMBOL, uprobe:PATH:SYMBOL). */
SEC("kprobe")
int probe_stack(struct pt_regs *ctx)
{
	return take_stack(ctx, 0);
}
