// Short-lived processes, the classic failure of profilers that read /proc
// late: each child burns a few milliseconds in burn_briefly() and is gone
// long before a recorder polling its buffer could read its maps.
//
// Usage: shortlived N        exec N children, one after another
//        shortlived --child  one child's work (what the children run)
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

__attribute__((noinline)) void burn_briefly(uint64_t iterations) {
  for (uint64_t i = 0; i < iterations; ++i)
    asm volatile("" : "+r"(i));  // keeps the loop: the compiler cannot see through it
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--child") == 0) {
    burn_briefly(40'000'000);  // ~15-30 ms
    return 0;
  }
  int children = argc > 1 ? std::atoi(argv[1]) : 200;
  // Exec'd by its own path, so the children's comm is "shortlived" too
  // (through /proc/self/exe it would be "exe").
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return 1;
  self[n] = '\0';
  for (int i = 0; i < children; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      execl(self, "shortlived", "--child", static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return 1;
  }
  return 0;
}
