// A fixture for DWARF source lookups (tests/dwarf_lines_test.cc), built -O2 -g
// as a PIE and as a fixed-address executable. Two functions are forced inline,
// one into the other, inside a noinline one; templates give names with
// template arguments. The test reads the LINE-* markers to know which line
// each frame should report: keep each marker on its own statement.

namespace {

// Stores to a volatile cannot be folded away, so each marked line keeps code.
volatile unsigned long sink;

}  // namespace

namespace fixture {

[[gnu::always_inline]] inline void inner(unsigned long x) {
  sink = x * 7 + 3;  // LINE-INNER
}

[[gnu::always_inline]] inline void outer(unsigned long x) {
  inner(x + 1);  // LINE-OUTER
  // A block with its own variable: a lexical block between this function's
  // inlined instance and the code, which callers' lookups must step over.
  for (unsigned long i = 0; i < x % 5; ++i) {
    unsigned long y = i * x;
    sink = y >> 2;
  }
}

[[gnu::noinline]] void containing(unsigned long x) {
  outer(x);  // LINE-CALLER
  sink = x * 5;
}

template <typename T>
[[gnu::always_inline]] inline T twice(T v) {
  sink = static_cast<unsigned long>(v);  // LINE-TWICE
  return v + v;
}

template <typename T>
[[gnu::noinline]] T scaled(T v) {
  T t = twice(v);  // LINE-SCALED
  sink = static_cast<unsigned long>(t);
  return t * 3;
}

}  // namespace fixture

int main(int argc, char**) {
  fixture::containing(static_cast<unsigned long>(argc));
  long a = fixture::scaled<long>(argc);
  int b = fixture::scaled<int>(argc);
  return static_cast<int>(a + b) & 1;
}
