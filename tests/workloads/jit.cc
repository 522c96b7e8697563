// Runs machine code it generated at run time and describes it in
// /tmp/perf-PID.map, the way JIT compilers (V8, the JVM with perf-map-agent,
// LuaJIT) do, so that a profiler can name it. The map is removed at exit, as
// a container's /tmp vanishes with it: only a recorder that read it while
// the process lived can name the code. With --map-at-exit the map is
// written only as it exits, and left (its path printed), as the JVM's
// -XX:+DumpPerfMapAtExit does. x86-64 only.
//
// Usage: jit [SECONDS] [--map-at-exit]
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
#if defined(__x86_64__)
  // mov rcx, 1000000; 1: dec rcx; jnz 1b; ret
  const unsigned char code[] = {0x48, 0xb9, 0x40, 0x42, 0x0f, 0x00, 0x00, 0x00,
                                0x00, 0x00, 0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3};
  void* mem = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
    return 1;
  std::memcpy(mem, code, sizeof code);
  if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) != 0)
    return 1;
  const std::string map = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  auto write_map = [&] {
    FILE* f = std::fopen(map.c_str(), "w");
    if (!f)
      return false;
    std::fprintf(f, "%lx %zx jitted_spin\n", reinterpret_cast<unsigned long>(mem), sizeof code);
    return std::fclose(f) == 0;
  };
  const bool at_exit = argc > 2 && std::strcmp(argv[2], "--map-at-exit") == 0;
  if (!at_exit && !write_map())
    return 1;

  auto spin = reinterpret_cast<void (*)()>(mem);
  using clock = std::chrono::steady_clock;
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  for (auto end = clock::now() + std::chrono::duration<double>(seconds); clock::now() < end;)
    spin();
  if (at_exit) {
    std::printf("%s\n", map.c_str());  // left for the caller to remove
    return write_map() ? 0 : 1;
  }
  std::remove(map.c_str());
  return 0;
#else
  std::fprintf(stderr, "jit: x86-64 only\n");
  return 2;
#endif
}
