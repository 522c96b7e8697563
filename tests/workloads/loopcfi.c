// Call frame information a hostile binary could carry: while spin() runs,
// the rule for its return address is a DWARF expression that loops
// (DW_OP_skip back onto itself, pushing as it goes). An unwinder that
// evaluates it without a bound never finishes the step.
// scripts/make-hostile-cfi.sh records it into tests/data. x86-64 only.
//
// Usage: loopcfi [SECONDS]
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) static void spin(long n) {
#if defined(__x86_64__)
  __asm__ volatile(
      ".cfi_remember_state\n"
      // DW_CFA_def_cfa_expression, 4 bytes: DW_OP_lit0, DW_OP_skip -4.
      ".cfi_escape 0x16, 0x10, 0x04, 0x30, 0x2f, 0xfc, 0xff\n"
      "1: dec %0\n"
      "jnz 1b\n"
      ".cfi_restore_state\n"
      : "+r"(n));
#endif
}

int main(int argc, char** argv) {
#if defined(__x86_64__)
  const double seconds = argc > 1 ? atof(argv[1]) : 2.0;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    spin(10000000);
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
  return 0;
#else
  fprintf(stderr, "loopcfi: x86-64 only\n");
  return 2;
#endif
}
