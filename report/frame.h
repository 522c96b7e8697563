#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

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

// The frames of one stack, leaf first, shared and read-only: one stack shows
// up under many (thread, CPU, comm) keys, and copying its frames for each
// (a few hundred bytes apiece) was most of a large report's memory traffic.
class Frames {
 public:
  Frames() = default;
  Frames(std::vector<Frame> frames)  // NOLINT: implicit, like the vector it holds
      : frames_(std::make_shared<const std::vector<Frame>>(std::move(frames))) {}
  Frames(std::initializer_list<Frame> frames) : Frames(std::vector<Frame>(frames)) {}

  const std::vector<Frame>& get() const {
    static const std::vector<Frame> kNone;
    return frames_ ? *frames_ : kNone;
  }
  operator std::span<const Frame>() const { return get(); }  // NOLINT
  auto begin() const { return get().begin(); }
  auto end() const { return get().end(); }
  auto rbegin() const { return get().rbegin(); }
  auto rend() const { return get().rend(); }
  size_t size() const { return get().size(); }
  bool empty() const { return get().empty(); }
  const Frame& operator[](size_t i) const { return get()[i]; }
  const Frame& back() const { return get().back(); }

 private:
  std::shared_ptr<const std::vector<Frame>> frames_;
};

}  // namespace ebprof::report
