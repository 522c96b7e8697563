/* The record layout shared by profile.bpf.c and ebprof-record. It is an ABI
 * between the two halves of one binary, never written to disk: the recorder
 * decodes it into format/ structs. Fixed-width types only, no includes, so
 * both the BPF and the C++ compiler read it the same way. */
#ifndef EBPROF_BPF_PROFILE_H
#define EBPROF_BPF_PROFILE_H

/* The kernel's own cap on a callchain (PERF_MAX_STACK_DEPTH). */
#define EBPROF_MAX_FRAMES 127
#define EBPROF_COMM_LEN	  16

/* Why a sample, or part of one, was lost. Indexes the per-CPU losses map. */
enum ebprof_loss_cause {
	EBPROF_LOSS_RINGBUF_FULL = 0, /* no room in the ring or perf buffer: sample dropped */
	EBPROF_LOSS_KERNEL_STACK = 1, /* bpf_get_stack failed for the kernel stack */
	EBPROF_LOSS_USER_STACK = 2,   /* bpf_get_stack failed for the user stack */
	EBPROF_LOSS_TRUNCATED = 3,    /* a half of the stack filled all EBPROF_MAX_FRAMES */
	EBPROF_LOSS_OUTPUT = 4,	      /* the perf buffer refused the record for another reason */
	EBPROF_LOSS_CAUSES = 5,
};

/* One sample as sent through the ring or perf buffer. Only the header and the
 * kernel_frames + user_frames used entries of ips are sent: kernel frames
 * first (leaf first), then user frames (leaf first). */
struct ebprof_sample {
	unsigned long long time_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	unsigned int tgid;
	unsigned int tid;
	unsigned int cpu;
	unsigned short kernel_frames;
	unsigned short user_frames;
	char comm[EBPROF_COMM_LEN];
	unsigned long long ips[2 * EBPROF_MAX_FRAMES];
};

#define EBPROF_SAMPLE_HEADER_SIZE 40

#endif
