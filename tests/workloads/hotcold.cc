// A CPU-bound program with a known call tree, for the demo and the
// end-to-end tests:
//
//   main -> demo::caller_a() -> demo::hot_leaf(unsigned long)   70% of the time
//   main -> demo::caller_b() -> demo::hot_leaf(unsigned long)   30% of the time
//
// Usage: hotcold [SECONDS]       run for SECONDS (default 3)
//        hotcold --rounds N      run N rounds of fixed work (benchmarks)
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "demo_lib.h"

namespace demo {

constexpr unsigned long kUnit = 20000;  // ~0.1 ms of hot_leaf

__attribute__((noinline)) void caller_a() {
  hot_leaf(7 * kUnit);
}
__attribute__((noinline)) void caller_b() {
  hot_leaf(3 * kUnit);
}

}  // namespace demo

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "--rounds") == 0) {
    for (long n = std::atol(argv[2]); n > 0; --n) {
      demo::caller_a();
      demo::caller_b();
    }
    return 0;
  }
  using clock = std::chrono::steady_clock;
  double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  auto end = clock::now() + std::chrono::duration<double>(seconds);
  // Each caller half the time, in random order: a fixed 1 ms round of a
  // then b would alias with sampling rates near a multiple of 1 kHz and
  // skew the shares for seconds at a time; calls of random order keep
  // caller_a's 70% of the time without a period to alias with.
  uint64_t state = 0x9e3779b97f4a7c15ull;
  while (clock::now() < end) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    (state & 1) ? demo::caller_a() : demo::caller_b();
  }
  return 0;
}
