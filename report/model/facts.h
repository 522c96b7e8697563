#pragma once

// The report's profile model, part 4: what `ebprof-report info` says of
// one recording beyond a report's header.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "report/model/frame.h"
#include "report/model/profile.h"

namespace ebprof::report {

// One kind of frame of a file: how many, and their bytes on disk
// (compressed, frame headers included) and decoded.
struct FileSection {
  std::string kind;
  uint64_t frames = 0, stored_bytes = 0, raw_bytes = 0;
};

// How the samples' user stacks unwound (--call-graph dwarf).
struct UnwindCounts {
  uint64_t full = 0;                      // to the outermost frame
  uint64_t spliced = 0;                   // continued on the frame-pointer chain
  std::map<UnnamedReason, uint64_t> cut;  // stopped short, by why
};

struct RecordingFacts {
  RecordingSummary summary;  // of this recording alone
  uint16_t version_major = 0, version_minor = 0;
  // In a merged file: which input it was (source_path empty otherwise).
  uint32_t source_index = 0;
  std::string source_path;
  uint16_t source_version_major = 0, source_version_minor = 0;
  std::vector<std::string> command_line;
  std::string transport;
  uint64_t off_cpu_min_block_ns = 0, off_cpu_max_block_ns = 0;
  uint64_t off_cpu_intervals = 0, off_cpu_ns = 0;
  size_t stacks = 0;
  size_t processes = 0, captures = 0, mappings = 0;
  // Dropped samples per CPU (format::kNoCpu: found by the recorder), and
  // from when to when they were reported, in seconds from the start.
  std::map<uint16_t, uint64_t> dropped_by_cpu;
  double dropped_from_s = 0, dropped_to_s = 0;
  uint64_t task_events_lost = 0;
  std::string kernel_build_id;  // raw bytes
  size_t kernel_modules = 0, kernel_modules_with_build_id = 0;
  size_t kernel_symbols = 0;
  bool kernel_addresses_hidden = false;
  size_t embedded_binaries = 0, embedded_functions = 0;
  // Binaries sampled user frames fall in: with a build-id, of them with an
  // embedded table, and without a build-id (which cannot be embedded).
  size_t sampled_binaries = 0, sampled_with_embedded = 0, sampled_without_build_id = 0;
  std::vector<FileSection> sections;  // in file order of first appearance
  // --call-graph dwarf: the window size asked for (0 without), the windows
  // and the bytes of their distinct blocks, and the binaries' embedded CFI.
  uint32_t user_stack_bytes = 0;
  size_t windows = 0;
  uint64_t window_bytes = 0;
  size_t embedded_cfi = 0;
  // CPython: the processes whose frames were read, the code objects
  // named, and the samples of those processes by how their walk ended.
  size_t python_processes = 0, python_code_objects = 0;
  std::array<uint64_t, format::kPythonEnds> python_walks{};
};

}  // namespace ebprof::report
