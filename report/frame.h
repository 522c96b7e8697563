#pragma once

#include <cstdint>
#include <string>

namespace ebprof::report {

// One symbolized stack frame. An address that could not be named has a name
// of the form "[unknown] (module+0xoffset)", never a guess.
struct Frame {
  std::string name;
  std::string module;  // "libc.so.6", "[kernel.kallsyms]", "[ext4]", ...
  bool kernel = false;
  bool resolved = false;
  uint64_t address = 0;  // as recorded: the sampled IP, or a return address
  uint64_t offset = 0;   // of `address` from the symbol's start, when resolved
  std::string path;      // the mapped file ("" when not file-backed), for script output
  // For pprof: the name as the binary has it (mangled), the mapped file's
  // build-id, and `address` as an offset into that file (the address itself
  // for kernel and JIT code).
  std::string system_name;
  std::string build_id;
  uint64_t file_offset = 0;
  // From DWARF, when the binary's debuginfo was found: a function inlined
  // into the next frame (same address), and the source position.
  bool inlined = false;
  std::string file;
  int line = 0;
  // Why an unresolved frame has no name ("binary not found", "JIT map
  // missing", ...), for the per-reason summary; empty when resolved.
  std::string reason;
};

}  // namespace ebprof::report
