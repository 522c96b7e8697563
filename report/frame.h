#pragma once

#include <string>

namespace ebprof::report {

// One symbolized stack frame. An address that could not be named has a name
// of the form "[unknown] (module+0xoffset)", never a guess.
struct Frame {
  std::string name;
  std::string module;  // "libc.so.6", "[kernel.kallsyms]", "[ext4]", ...
  bool kernel = false;
  bool resolved = false;
};

}  // namespace ebprof::report
