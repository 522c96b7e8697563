// Loads each plugin given with dlopen, runs it for SECONDS, and unloads it
// before loading the next: the second plugin usually lands at the very
// addresses the first one had, which a profiler must not confuse.
//
// Usage: dlopen_host SECONDS PLUGIN.so...
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: dlopen_host SECONDS PLUGIN.so...\n");
    return 2;
  }
  using clock = std::chrono::steady_clock;
  const auto each = std::chrono::duration<double>(std::atof(argv[1]));
  for (int i = 2; i < argc; ++i) {
    void* lib = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    auto run = lib ? reinterpret_cast<void (*)(unsigned long)>(dlsym(lib, "plugin_run")) : nullptr;
    if (!run) {
      std::fprintf(stderr, "dlopen_host: %s\n", dlerror());
      return 1;
    }
    for (auto end = clock::now() + each; clock::now() < end;)
      run(1'000'000);
    dlclose(lib);
  }
  return 0;
}
