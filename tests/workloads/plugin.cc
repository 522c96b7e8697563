// A plugin for dlopen_host, built twice: PLUGIN_SPIN names its hot function
// (plugin_a_spin, plugin_b_spin), so the report can tell which library ran.
extern "C" __attribute__((noinline)) void PLUGIN_SPIN(unsigned long iterations) {
  for (unsigned long i = 0; i < iterations; ++i)
    asm volatile("" : "+r"(i));  // keeps the loop: the compiler cannot see through it
}

extern "C" void plugin_run(unsigned long iterations) {
  PLUGIN_SPIN(iterations);
}
