/* A shared library built without frame pointers, for --call-graph dwarf:
 * nofp_chain recurses `depth` times, then burns in nofp_spin. */
#include "nofp_lib.h"

volatile unsigned long nofp_sink;

__attribute__((noinline)) void nofp_spin(unsigned long iterations) {
  unsigned long acc = nofp_sink;
  for (unsigned long i = 0; i < iterations; ++i)
    acc = acc * 6364136223846793005ul + i;
  nofp_sink = acc;
}

__attribute__((noinline)) void nofp_chain(int depth, unsigned long iterations) {
  if (depth > 0)
    nofp_chain(depth - 1, iterations);
  else
    nofp_spin(iterations);
  nofp_sink += depth; /* no tail call */
}
