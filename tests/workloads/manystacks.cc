// A workload of nearly as many distinct call paths as samples: 64
// functions calling one another, each picking the next by a pseudo-random
// state, 24 calls deep, so that no two samples share a stack. What a
// report does per distinct stack shows here (bench/cardinality.sh).
// Usage: manystacks SECONDS
#include <chrono>
#include <cstdint>
#include <cstdlib>

namespace {

using Step = uint64_t (*)(uint64_t state, int depth);
extern const Step kSteps[64];

constexpr int kDepth = 24;

// xorshift: the next state, and the next function from its low bits.
uint64_t next(uint64_t s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

template <int N>
__attribute__((noinline)) uint64_t step(uint64_t state, int depth) {
  if (depth == kDepth) {
    // The leaf burns a little, so samples land on full paths.
    for (int i = 0; i < 200; ++i)
      state = next(state) + N;
    return state;
  }
  const uint64_t s = next(state + N);
  return kSteps[s & 63](s, depth + 1) ^ N;
}

const Step kSteps[64] = {
#define S(n) step<n>, step<n + 1>, step<n + 2>, step<n + 3>
    S(0),  S(4),  S(8),  S(12), S(16), S(20), S(24), S(28),
    S(32), S(36), S(40), S(44), S(48), S(52), S(56), S(60),
#undef S
};
}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 5;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  uint64_t state = 0x9e3779b97f4a7c15ull, sink = 0;
  while (std::chrono::steady_clock::now() < end)
    for (int i = 0; i < 1000; ++i) {
      state = next(state);
      sink += kSteps[state & 63](state, 0);
    }
  return static_cast<int>(sink & 1);
}
