#include "record/task_events.h"

#include <sys/mman.h>
#include <sys/sysmacros.h>

#include <cstring>
#include <ctime>

namespace ebprof::record {
namespace {

// The sample_id trailer every side-band record ends with, for the
// sample_type task_event_attr() sets (PERF_SAMPLE_TID | PERF_SAMPLE_TIME).
struct SampleId {
  uint32_t pid;
  uint32_t tid;
  uint64_t time;
};

// The fixed part of a PERF_RECORD_MMAP2 record after its header; the
// NUL-terminated file name follows, then the trailer.
struct Mmap2Body {
  uint32_t pid, tid;
  uint64_t addr, len, pgoff;
  uint32_t maj, min;
  uint64_t ino, ino_generation;
  uint32_t prot, flags;
};

struct TaskBody {  // PERF_RECORD_FORK and PERF_RECORD_EXIT
  uint32_t pid, ppid, tid, ptid;
  uint64_t time;
};

struct LostBody {
  uint64_t id, lost;
};

template <typename T>
bool read_at(std::span<const std::byte> bytes, size_t offset, T& out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
    return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

// The NUL-terminated string at `offset`, bounded by the trailer.
std::string read_string(std::span<const std::byte> bytes, size_t offset, size_t end) {
  if (offset >= end)
    return {};
  const char* s = reinterpret_cast<const char*>(bytes.data() + offset);
  return std::string(s, strnlen(s, end - offset));
}

}  // namespace

perf_event_attr task_event_attr() {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  attr.sample_id_all = 1;
  attr.mmap = 1;  // executable mappings only: data mappings cannot hold an IP
  attr.mmap2 = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  // Read on the recorder's own schedule: never wake it for these.
  attr.watermark = 1;
  attr.wakeup_watermark = UINT32_MAX;
  return attr;
}

std::optional<TaskEvent> decode_task_event(std::span<const std::byte> record) {
  perf_event_header header;
  SampleId id;
  if (!read_at(record, 0, header) || header.size != record.size() ||
      record.size() < sizeof(header) + sizeof(id) ||
      !read_at(record, record.size() - sizeof(id), id))
    return std::nullopt;
  const size_t body = sizeof(header);
  const size_t trailer = record.size() - sizeof(id);
  TaskEvent e;
  e.time_ns = id.time;

  switch (header.type) {
    case PERF_RECORD_MMAP2: {
      Mmap2Body m;
      if (!read_at(record, body, m) || body + sizeof(m) > trailer || !(m.prot & PROT_EXEC))
        return std::nullopt;
      e.kind = TaskEvent::Kind::kMmap;
      e.pid = m.pid;
      e.mapping.start = m.addr;
      e.mapping.end = m.addr + m.len;
      e.mapping.file_offset = m.pgoff;
      e.mapping.path = read_string(record, body + sizeof(m), trailer);
      if (e.mapping.path == "//anon")
        e.mapping.path.clear();  // as /proc/PID/maps shows anonymous memory
      // Another tool's build-id flag can leak onto this record (see
      // task_event_attr()): it never asked for one, so the body is the file's.
      e.device = makedev(m.maj, m.min);
      e.inode = m.ino;
      return e;
    }
    case PERF_RECORD_COMM: {
      uint32_t pid_tid[2];
      if (!(header.misc & PERF_RECORD_MISC_COMM_EXEC) || !read_at(record, body, pid_tid))
        return std::nullopt;
      e.kind = TaskEvent::Kind::kExec;
      e.pid = pid_tid[0];
      e.comm = read_string(record, body + sizeof(pid_tid), trailer);
      return e;
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: {
      TaskBody t;
      // Only processes matter: a thread shares its process's maps.
      if (!read_at(record, body, t) || t.pid != t.tid ||
          (header.type == PERF_RECORD_FORK && t.pid == t.ppid))
        return std::nullopt;
      e.kind = header.type == PERF_RECORD_FORK ? TaskEvent::Kind::kFork : TaskEvent::Kind::kExit;
      e.pid = t.pid;
      e.parent = t.ppid;
      return e;
    }
    case PERF_RECORD_LOST: {
      LostBody l;
      if (!read_at(record, body, l))
        return std::nullopt;
      e.kind = TaskEvent::Kind::kLost;
      e.lost = l.lost;
      return e;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace ebprof::record
