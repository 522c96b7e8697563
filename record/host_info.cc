#include "record/host_info.h"

#include <sys/utsname.h>
#include <time.h>

#include "common/boot_id.h"

namespace ebprof::record {
namespace {

uint64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

uint64_t monotonic_ns() {
  return clock_ns(CLOCK_MONOTONIC);
}

uint64_t realtime_ns() {
  return clock_ns(CLOCK_REALTIME);
}

format::RecordingInfo describe_host() {
  format::RecordingInfo info;
  info.writer_version = EBPROF_VERSION;
  utsname u{};
  if (uname(&u) == 0) {
    info.hostname = u.nodename;
    info.kernel_release = u.release;
    info.machine = u.machine;
  }
  info.boot_id = this_boot_id();
  info.start_realtime_ns = clock_ns(CLOCK_REALTIME);
  info.start_monotonic_ns = monotonic_ns();
  return info;
}

}  // namespace ebprof::record
