/* SPDX-License-Identifier: GPL-2.0 */
/* CPython's frames, read at sample time: its interpreter frames live on
 * the heap, where no copy of the stack finds them. For a process the
 * recorder found to be a CPython it can read (python_procs, by tgid), the
 * sampled thread's state is the GIL holder's when that is this thread, or
 * else its pthread key's value; its frames are walked from
 * tstate->cframe->current_frame by `previous`, one bpf_loop step each,
 * every one checked (its code object's type is PyCode_Type), and each
 * written into the record as two words (bpf/profile.h). Names are the
 * recorder's business, read from the process off this path. */
#ifndef EBPROF_PYTHON_BPF_H
#define EBPROF_PYTHON_BPF_H

#include "common.bpf.h"

#define PYTHON_PROCS_MAP                                                                           \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(max_entries, 4096);                                                         \
		__type(key, __u32);                                                                \
		__type(value, struct ebprof_python_proc);                                          \
	}
SHARED PYTHON_PROCS_MAP python_procs SEC(".maps");

/* The bytes of one frame and of its code object, read whole (two reads a
 * frame), then picked apart at the offsets of the process's layout:
 * PY_READ_FRAME and PY_READ_CODE bytes, in a PY_CHUNK the offsets are
 * masked into. */
#define PY_CHUNK      256
#define PY_READ_FRAME 80
#define PY_READ_CODE  128
struct python_chunks {
	__u8 frame[PY_CHUNK];
	__u8 code[PY_CHUNK];
};
/* One per CPU for samples, one for switches, which a sample can interrupt. */
#define PYTHON_SCRATCH_MAP                                                                         \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                                           \
		__uint(max_entries, 2);                                                            \
		__type(key, __u32);                                                                \
		__type(value, struct python_chunks);                                               \
	}
SHARED PYTHON_SCRATCH_MAP python_scratch SEC(".maps");

/* What one walk carries from step to step: the layout (copied, so that the
 * steps need no map value), where it is and where frames go. */
struct python_walk {
	struct ebprof_python_proc layout;
	__u64 frame;  /* the next _PyInterpreterFrame */
	__u32 dst;    /* where its words go in the record slot, in bytes from its start */
	__u32 count;  /* frames written */
	__u32 end;    /* enum ebprof_python_end once the walk stopped */
	__u32 chunks; /* python_scratch's index */
};

static __always_inline __u64 py_word(const __u8 *chunk, __u32 at)
{
	return *(const __u64 *)(chunk + (at & (PY_CHUNK - 8)));
}

static __always_inline __s32 py_int(const __u8 *chunk, __u32 at)
{
	return *(const __s32 *)(chunk + (at & (PY_CHUNK - 4)));
}

/* One frame into `slot` (a record slot of map `map`): a step of bpf_loop,
 * defined by the unit that walks into that map. */
#define PYTHON_STEP(name, map)                                                                     \
	static long name(__u32 index, struct python_walk *w)                                       \
	{                                                                                          \
		__u32 cpu = bpf_get_smp_processor_id();                                            \
		__u8 *slot = bpf_map_lookup_elem(&map, &cpu);                                      \
		struct python_chunks *c = bpf_map_lookup_elem(&python_scratch, &w->chunks);        \
		__u64 code, instr, *out;                                                           \
		__s64 lasti;                                                                       \
		__u32 check;                                                                       \
                                                                                                   \
		if (!slot || !c)                                                                   \
			return 1;                                                                  \
		if (!w->frame) {                                                                   \
			w->end = EBPROF_PY_COMPLETE;                                               \
			return 1;                                                                  \
		}                                                                                  \
		if (w->count >= EBPROF_MAX_PY_FRAMES) {                                            \
			w->end = EBPROF_PY_TOO_DEEP;                                               \
			return 1;                                                                  \
		}                                                                                  \
		if (bpf_probe_read_user(c->frame, PY_READ_FRAME, (void *)w->frame)) {              \
			w->end = EBPROF_PY_UNREADABLE;                                             \
			return 1;                                                                  \
		}                                                                                  \
		if (c->frame[w->layout.frame_owner & (PY_CHUNK - 1)] > w->layout.max_owner) {      \
			w->end = EBPROF_PY_NOT_CODE;                                               \
			return 1;                                                                  \
		}                                                                                  \
		code = py_word(c->frame, w->layout.frame_code);                                    \
		if (!code || bpf_probe_read_user(c->code, PY_READ_CODE, (void *)code)) {           \
			w->end = EBPROF_PY_UNREADABLE;                                             \
			return 1;                                                                  \
		}                                                                                  \
		/* ob_type, just after the reference count. */                                     \
		if (py_word(c->code, 8) != w->layout.code_type) {                                  \
			w->end = EBPROF_PY_NOT_CODE;                                               \
			return 1;                                                                  \
		}                                                                                  \
		instr = py_word(c->frame, w->layout.frame_instr);                                  \
		/* BPF has no signed division: an arithmetic shift halves. */                      \
		lasti = ((__s64)instr - (__s64)(code + w->layout.code_bytecode)) >> 1;             \
		check = ((__u32)py_int(c->code, w->layout.code_argcount) << 25) +                  \
			((__u32)py_int(c->code, w->layout.code_kwonly) << 18) +                    \
			((__u32)py_int(c->code, w->layout.code_flags) << 10) +                     \
			(__u32)py_int(c->code, w->layout.code_firstline);                          \
		check ^= (__u32)(py_word(c->code, w->layout.code_name) >> 4);                      \
		out = (__u64 *)(slot + (w->dst & 0x3fff));                                         \
		out[0] = code |                                                                    \
			 (c->frame[w->layout.frame_entry & (PY_CHUNK - 1)] ? EBPROF_PY_ENTRY : 0); \
		out[1] = ((__u64)(__u32)(__s32)lasti << 32) | check;                               \
		w->dst += 16;                                                                      \
		w->count++;                                                                        \
		w->frame = py_word(c->frame, w->layout.frame_previous);                            \
		return 0;                                                                          \
	}

/* The thread state of thread `tid` of `p`'s process: the GIL holder's if
 * it is this thread (and then EBPROF_HOLDS_GIL in *flags), else what its
 * pthread key holds; 0 for a thread with none. */
static __always_inline __u64 python_thread_state(const struct ebprof_python_proc *p, __u32 tid,
						 __u32 *flags)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 tstate = 0, native = 0, fsbase;
	__u32 key = 0;

	if (bpf_probe_read_user(&tstate, sizeof(tstate),
				(void *)(p->runtime + p->tstate_current)) == 0 &&
	    tstate &&
	    bpf_probe_read_user(&native, sizeof(native), (void *)(tstate + p->thread_id)) == 0 &&
	    native == tid) {
		*flags |= EBPROF_HOLDS_GIL;
		return tstate;
	}
	tstate = 0;
	/* glibc keeps the first 32 keys in the thread's descriptor, which
	 * fsbase points to; Python takes its key early, one of those. */
	if (bpf_probe_read_user(&key, sizeof(key), (void *)(p->runtime + p->tss_key)) || key >= 32)
		return 0;
	fsbase = task->thread.fsbase;
	if (bpf_probe_read_user(&tstate, sizeof(tstate),
				(void *)(fsbase + p->tsd_offset + 16 * (__u64)key)) ||
	    !tstate)
		return 0;
	/* Only a state that says it is this thread's: a libc whose key slots
	 * are elsewhere, or a key not yet made, gives no frames, never
	 * another thread's. */
	if (bpf_probe_read_user(&native, sizeof(native), (void *)(tstate + p->thread_id)) ||
	    native != tid)
		return 0;
	return tstate;
#else
	return 0;
#endif
}

/* Writes the Python frames of the current thread of `tgid` into the
 * record slot `slot`, after its native frames, setting s->python_frames
 * and s->python_end. Returns the bytes written; sets *wake when the
 * recorder asked to be woken by this process's samples. */
typedef long (*python_step_fn)(__u32 index, struct python_walk *w);
static __always_inline __u32 take_python_frames(struct ebprof_stack_sample *slot, __u32 tgid,
						__u32 tid, __u32 chunks, python_step_fn step,
						bool *wake)
{
	struct ebprof_sample *s = &slot->s;
	const struct ebprof_python_proc *p = bpf_map_lookup_elem(&python_procs, &tgid);
	struct python_walk walk = {};
	__u64 tstate, cframe = 0;

	s->python_frames = 0;
	s->python_end = EBPROF_PY_NONE;
	if (!p)
		return 0;
	*wake = bpf_ktime_get_ns() < p->wake_until_ns;
	walk.layout = *p;
	walk.dst = __builtin_offsetof(struct ebprof_sample, ips) +
		   ((s->kernel_frames & 0x7f) + (s->user_frames & 0x7f)) * sizeof(__u64);
	walk.chunks = chunks;
	walk.end = EBPROF_PY_UNREADABLE;
	tstate = python_thread_state(p, tid, &s->flags);
	if (!tstate) {
		s->python_end = EBPROF_PY_NO_THREAD;
		return 0;
	}
	if (bpf_probe_read_user(&cframe, sizeof(cframe), (void *)(tstate + p->thread_cframe)) ||
	    !cframe ||
	    bpf_probe_read_user(&walk.frame, sizeof(walk.frame),
				(void *)(cframe + p->cframe_frame))) {
		s->python_end = EBPROF_PY_UNREADABLE;
		return 0;
	}
	bpf_loop(EBPROF_MAX_PY_FRAMES + 1, step, &walk, 0);
	s->python_frames = walk.count;
	s->python_end = walk.end;
	return walk.count * 16;
}

#endif
