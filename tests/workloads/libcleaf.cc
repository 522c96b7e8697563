// Frame-pointer code whose time is in libc, which Debian builds without
// frame pointers: a leaf there hides its caller from a frame-pointer walk.
//   copier:  memcpy() from copy_buffers(), on CPU;
//   clearer: memset() from clear_buffers(), on CPU;
//   napper:  nanosleep() from nap(), off CPU;
//   reader:  read() of a pipe from wait_pipe(), which main fills every 20 ms.
// Each thread is named after its role (its comm).
//
// Usage: libcleaf [SECONDS]
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
std::atomic<bool> running{true};
std::vector<char> from(1 << 20), to(1 << 20);
std::vector<char> area(1 << 20);

__attribute__((noinline)) void copy_buffers() {
  std::memcpy(to.data(), from.data(), from.size());
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void clear_buffers() {
  std::memset(area.data(), 0x5a, area.size());
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void nap() {
  timespec ts{0, 10'000'000};
  nanosleep(&ts, nullptr);
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void wait_pipe(int fd) {
  char c;
  if (read(fd, &c, 1) < 0)
    running = false;
  asm volatile("" ::: "memory");
}

void named(const char* name) {
  pthread_setname_np(pthread_self(), name);
}

}  // namespace

int main(int argc, char** argv) {
  const auto end = Clock::now() + std::chrono::duration<double>(argc > 1 ? std::atof(argv[1]) : 2);
  int fds[2];
  if (pipe(fds) != 0)
    return 1;
  std::thread copier([] {
    named("copier");
    while (running)
      copy_buffers();
  });
  std::thread clearer([] {
    named("clearer");
    while (running)
      clear_buffers();
  });
  std::thread napper([] {
    named("napper");
    while (running)
      nap();
  });
  std::thread reader([&] {
    named("reader");
    while (running)
      wait_pipe(fds[0]);
  });
  while (Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    (void)!write(fds[1], "x", 1);
  }
  running = false;
  (void)!write(fds[1], "x", 1);
  for (std::thread* t : {&copier, &clearer, &napper, &reader})
    t->join();
  return 0;
}
