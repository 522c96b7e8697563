// Call frame information a hostile binary could carry: where spin() calls
// loopcfi_leaf(), the rule for spin's return address is a DWARF expression
// that loops (DW_OP_skip back onto itself, pushing as it goes). An unwinder
// that evaluates it without a bound never finishes the step.
// scripts/make-hostile-cfi.sh records it into tests/data. x86-64 only.
//
// Usage: loopcfi [SECONDS]
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// A plain leaf, where the samples land: the loop is in its caller's CFI,
// which a walk meets after a step, as it would in a real binary.
__attribute__((noinline)) void loopcfi_leaf(long n) {
  for (volatile long i = n; i > 0; --i) {
  }
}

__attribute__((noinline)) static void spin(long n) {
#if defined(__x86_64__)
  // The call is made from inside the region the escape covers: below the
  // red zone, on a 16-byte aligned stack, rbx keeping rsp.
  __asm__ volatile(
      ".cfi_remember_state\n"
      // DW_CFA_val_expression r16 (the return address), 4 bytes:
      // DW_OP_lit0, DW_OP_skip -4.
      ".cfi_escape 0x16, 0x10, 0x04, 0x30, 0x2f, 0xfc, 0xff\n"
      "mov %%rsp, %%rbx\n"
      "sub $128, %%rsp\n"
      "and $-16, %%rsp\n"
      "call loopcfi_leaf\n"
      "mov %%rbx, %%rsp\n"
      ".cfi_restore_state\n"
      : "+D"(n)
      :
      : "rax", "rbx", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory", "cc");
#endif
}

int main(int argc, char** argv) {
#if defined(__x86_64__)
  const double seconds = argc > 1 ? atof(argv[1]) : 2.0;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    spin(1000000);
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
  return 0;
#else
  fprintf(stderr, "loopcfi: x86-64 only\n");
  return 2;
#endif
}
