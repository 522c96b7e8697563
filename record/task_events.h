#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "format/contents.h"

namespace ebprof::record {

// What the kernel reports about processes through perf's side-band records
// (PERF_RECORD_MMAP2, COMM with exec, FORK, EXIT, LOST): enough to know the
// maps of every process at any instant, including ones that live a few
// milliseconds and are gone before /proc could be read.
struct TaskEvent {
  enum class Kind { kMmap, kExec, kFork, kExit, kLost };
  Kind kind = Kind::kMmap;
  uint64_t time_ns = 0;     // CLOCK_MONOTONIC, the clock samples use
  uint32_t pid = 0;         // the process mapping, exec'ing, forked or exiting
  uint32_t parent = 0;      // kFork: the process it was forked from
  format::Mapping mapping;  // kMmap: the mapping, its identity not yet known
  // kMmap: the mapped file's device (st_dev) and inode, which tell it
  // apart from whatever its path names once the process is gone.
  uint64_t device = 0, inode = 0;
  std::string comm;   // kExec: the new program's comm
  uint64_t lost = 0;  // kLost: records the kernel dropped
};

// The attributes of the per-CPU dummy event that carries these records:
// executable mmaps, comm on exec, fork and exit, each stamped with
// CLOCK_MONOTONIC time (sample_id_all). Without build-ids in MMAP2 records
// (attr.build_id): the kernel (6.18 still) leaves the record's build-id
// flag set for the events of other tools that come after one that asks for
// it, whose readers then take the file's device number as a build-id's
// size: Debian's perf 6.1 overflows a buffer on it and aborts
// (util/build-id.c: "assertion failed", "stack smashing detected").
perf_event_attr task_event_attr();

// Decodes one record read from a ring opened with task_event_attr(). Thread
// creation and exit, non-exec comm changes and records of other types give
// nullopt, as do malformed ones: none of them changes a process's maps.
std::optional<TaskEvent> decode_task_event(std::span<const std::byte> record);

}  // namespace ebprof::record
