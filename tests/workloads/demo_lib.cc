#include "demo_lib.h"

namespace demo {

volatile unsigned long sink;

void hot_leaf(unsigned long iterations) {
  // A stack-resident accumulator gives this leaf a stack frame: GCC sets up
  // no frame pointer in a leaf that never touches the stack, even with
  // -fno-omit-frame-pointer, and frame-pointer unwinding would then skip
  // its caller.
  volatile unsigned long acc = 0;
  for (unsigned long i = 0; i < iterations; ++i)
    acc = acc + i * i;
  sink = acc;
}

}  // namespace demo
