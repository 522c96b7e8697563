// Page faults in two known places, for -e page-faults at -F: trickle()
// faults one page every 5 ms for SECONDS, then burst() faults in 64 MiB at
// once (16,384 faults in milliseconds, which the kernel samples with ever
// longer periods). Prints "trickle N" and "burst N": the faults each made,
// what a profile weighed by period is checked against.
//
// Usage: faults [SECONDS]
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

constexpr size_t kPage = 4096;

// Writes a byte to each page of fresh anonymous memory: a fault each (no
// huge pages, which would fault 512 pages at once).
__attribute__((noinline)) size_t fault_in(size_t pages) {
  void* memory =
      mmap(nullptr, pages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  madvise(memory, pages * kPage, MADV_NOHUGEPAGE);
  auto* bytes = static_cast<volatile char*>(memory);
  for (size_t i = 0; i < pages; ++i)
    bytes[i * kPage] = 1;
  munmap(memory, pages * kPage);
  return pages;
}

__attribute__((noinline)) size_t trickle(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  size_t faults = 0;
  while (std::chrono::steady_clock::now() < end) {
    faults += fault_in(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return faults;
}

__attribute__((noinline)) size_t burst() {
  return fault_in(16384);
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 1.0;
  const size_t slow = trickle(seconds);
  const size_t fast = burst();
  printf("trickle %zu\nburst %zu\n", slow, fast);
  return 0;
}
