#pragma once

#include <cstdio>
#include <exception>
#include <new>
#include <type_traits>

#include "common/error.h"

namespace ebprof {

// The one place errors become output: runs `body` and turns an Error into
// "program: message" on stderr and exit status 1. Anything else that escapes
// is a bug, reported as such, still on one line and without a core dump.
// The status is 0, or what `body` returns if it returns one.
template <typename Body>
int run_guarded(const char* program, Body&& body) {
  try {
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      return 0;
    } else {
      return body();
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
  } catch (const std::bad_alloc&) {
    // Said as what it is, not as a bug: an input can ask for more memory
    // than the machine has (a crafted file, or one far larger than usual).
    // ebprof-report says more, against its own budget.
    std::fprintf(stderr, "%s: out of memory: this machine has no more to give\n", program);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", program, e.what());
  }
  return 1;
}

}  // namespace ebprof
