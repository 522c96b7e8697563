// Threads that spend their time off CPU in known places, for --off-cpu:
//   sleeper: nanosleep(100 ms) in sleep_100ms(), over and over;
//   reader:  read() of a pipe in read_pipe(), which feeder fills every 50 ms;
//   feeder:  nanosleep(50 ms) in feed_pipe(), then one byte into the pipe.
// Each blocking system call is made from its own function's frame (inline
// asm, not libc's wrappers, which Debian builds without frame pointers and
// whose callers a frame-pointer unwinder would miss). Runs SECONDS, then
// prints, for the sleeper and the reader, "NAME TID SECONDS": each thread's
// id and how long it lived, the truth an off-CPU profile is checked against.
//
// Usage: offcpu [SECONDS]
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

__attribute__((always_inline)) inline long raw_syscall(long nr, long a, long b, long c) {
#if defined(__x86_64__)
  long ret;
  register long r10 asm("r10") = 0;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
               : "rcx", "r11", "memory");
  return ret;
#else
  // Elsewhere through libc: a frame-pointer unwinder may then skip the
  // caller of its wrapper, and the e2e tests say so.
  return syscall(nr, a, b, c);
#endif
}

__attribute__((noinline)) void sleep_100ms() {
  timespec ts{0, 100'000'000};
  raw_syscall(SYS_nanosleep, reinterpret_cast<long>(&ts), 0, 0);
}

__attribute__((noinline)) void read_pipe(int fd) {
  char c;
  raw_syscall(SYS_read, fd, reinterpret_cast<long>(&c), 1);
}

__attribute__((noinline)) void feed_pipe(int fd) {
  timespec ts{0, 50'000'000};
  raw_syscall(SYS_nanosleep, reinterpret_cast<long>(&ts), 0, 0);
  char c = 'x';
  raw_syscall(SYS_write, fd, reinterpret_cast<long>(&c), 1);
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  int fds[2];
  if (pipe(fds) != 0)
    return 1;
  struct Life {
    long tid = 0;
    double seconds = 0;
  } sleeper_life, reader_life;
  auto live = [](Life& life, auto&& body) {
    const auto born = Clock::now();
    life.tid = syscall(SYS_gettid);
    body();
    life.seconds = std::chrono::duration<double>(Clock::now() - born).count();
  };
  std::thread sleeper([&] {
    live(sleeper_life, [&] {
      while (Clock::now() < end)
        sleep_100ms();
    });
  });
  std::thread reader([&] {
    live(reader_life, [&] {
      while (Clock::now() < end)
        read_pipe(fds[0]);
    });
  });
  std::thread feeder([&] {
    // One byte past the end, so that the reader's last read returns.
    while (Clock::now() < end + std::chrono::milliseconds(60))
      feed_pipe(fds[1]);
  });
  sleeper.join();
  reader.join();
  feeder.join();
  std::printf("sleeper %ld %.6f\nreader %ld %.6f\n", sleeper_life.tid, sleeper_life.seconds,
              reader_life.tid, reader_life.seconds);
  return 0;
}
