// Context switches as fast as two threads can make them, for measuring what
// --off-cpu costs:
//   switches pingpong ROUNDS   two threads pass a byte back and forth
//                              through two pipes, ROUNDS times;
//   switches sleep ROUNDS      one thread sleeps 10 us, ROUNDS times.
// Prints the seconds it took.
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

__attribute__((noinline)) void pingpong(long rounds) {
  int there[2], back[2];
  if (pipe(there) != 0 || pipe(back) != 0)
    std::exit(1);
  std::thread echo([&] {
    char c;
    for (long i = 0; i < rounds; ++i)
      if (read(there[0], &c, 1) != 1 || write(back[1], &c, 1) != 1)
        std::exit(1);
  });
  char c = 'x';
  for (long i = 0; i < rounds; ++i)
    if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
      std::exit(1);
  echo.join();
}

__attribute__((noinline)) void sleep_wake(long rounds) {
  timespec ts{0, 10'000};
  for (long i = 0; i < rounds; ++i)
    nanosleep(&ts, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: switches pingpong|sleep ROUNDS\n");
    return 2;
  }
  const long rounds = std::atol(argv[2]);
  const auto start = std::chrono::steady_clock::now();
  if (std::strcmp(argv[1], "pingpong") == 0)
    pingpong(rounds);
  else
    sleep_wake(rounds);
  std::printf("%.6f\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}
