// A C++ program with a known call tree, built twice: without frame
// pointers (nofp) and with them (withfp), for --call-graph dwarf.
//
//   main -> work_a() -> recurse(12) x13 -> nofp_chain(8) x9 -> nofp_spin   70% of the time
//   main -> work_b() -> recurse(12) x13 -> nofp_chain(8) x9 -> nofp_spin   30%
//
// nofp_chain and nofp_spin live in a C library built without frame
// pointers either way.
//
// Usage: nofp [SECONDS]          the tree above
//        nofp --deep SECONDS     main -> deep() -> descend() x400, each frame
//                                with 256 bytes of locals: ~110 KB of stack
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "nofp_lib.h"

namespace {

constexpr unsigned long kUnit = 40000;

__attribute__((noinline)) void recurse(int depth, unsigned long iterations) {
  if (depth > 0)
    recurse(depth - 1, iterations);
  else
    nofp_chain(8, iterations);
  asm volatile("" ::: "memory");  // no tail call
}

__attribute__((noinline)) void work_a() {
  recurse(12, 7 * kUnit);
}
__attribute__((noinline)) void work_b() {
  recurse(12, 3 * kUnit);
}

__attribute__((noinline)) void descend(int depth) {
  volatile char locals[256];
  locals[0] = static_cast<char>(depth);
  if (depth > 0)
    descend(depth - 1);
  else
    nofp_spin(kUnit);
  asm volatile("" ::: "memory");
  (void)locals[0];
}

__attribute__((noinline)) void deep() {
  descend(400);
}

}  // namespace

int main(int argc, char** argv) {
  const bool deep_stack = argc > 1 && std::strcmp(argv[1], "--deep") == 0;
  const char* seconds_arg = deep_stack ? (argc > 2 ? argv[2] : "1") : (argc > 1 ? argv[1] : "3");
  using clock = std::chrono::steady_clock;
  const auto end = clock::now() + std::chrono::duration<double>(std::atof(seconds_arg));
  // Each caller half the calls, in random order, as hotcold does: no
  // period for a sampling rate to alias with.
  uint64_t state = 0x9e3779b97f4a7c15ull;
  while (clock::now() < end) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    if (deep_stack)
      deep();
    else
      (state & 1) ? work_a() : work_b();
  }
  return 0;
}
