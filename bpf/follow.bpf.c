// SPDX-License-Identifier: GPL-2.0
/* Process following for -p and a command: like perf's inherited events, a
 * target's children are targets too, and exited ones are forgotten. Raw
 * tracepoints rather than tp_btf, which not every kernel offers. */
#include "common.bpf.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

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
