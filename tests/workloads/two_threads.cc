// Two threads, each spinning in its own function, for -t: prints
// "TID_A TID_B" on a line of its own once both run, then runs for SECONDS.
//
// Usage: two_threads [SECONDS]
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

__attribute__((noinline)) void thread_a_work(Clock::time_point end, std::atomic<long>& tid) {
  tid = syscall(SYS_gettid);
  while (Clock::now() < end)
    for (unsigned long i = 0; i < 100'000; ++i)
      asm volatile("" : "+r"(i));  // the hot loop, in this very frame
}

__attribute__((noinline)) void thread_b_work(Clock::time_point end, std::atomic<long>& tid) {
  tid = syscall(SYS_gettid);
  while (Clock::now() < end)
    for (unsigned long i = 0; i < 100'000; ++i)
      asm volatile("" : "+r"(i));  // the hot loop, in this very frame
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(seconds));
  std::atomic<long> tid_a{0}, tid_b{0};
  std::thread a(thread_a_work, end, std::ref(tid_a));
  std::thread b(thread_b_work, end, std::ref(tid_b));
  while (tid_a == 0 || tid_b == 0)
    std::this_thread::yield();
  std::printf("%ld %ld\n", tid_a.load(), tid_b.load());
  std::fflush(stdout);
  a.join();
  b.join();
  return 0;
}
