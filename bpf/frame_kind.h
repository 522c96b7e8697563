/* What a frame of a stack is, numbered once for the BPF programs, the
 * recording and the report (format/contents.h's FrameKind takes these
 * values), as opentelemetry-ebpf-profiler's frametypes.h serves its BPF
 * and host code. A runtime whose frames BPF reads (an interpreter's)
 * appends its kind here. Include-free, like profile.h. */
#ifndef EBPROF_BPF_FRAME_KIND_H
#define EBPROF_BPF_FRAME_KIND_H

enum ebprof_frame_kind {
	EBPROF_FRAME_KERNEL = 1, /* an address in the kernel image or a module */
	EBPROF_FRAME_NATIVE = 2, /* an address in user memory: a mapped file or JIT code */
	/* a CPython _PyInterpreterFrame: its code object and instruction */
	EBPROF_FRAME_PYTHON = 3,
};

#endif
