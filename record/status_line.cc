#include "record/status_line.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>

namespace ebprof::record {

StatusLine::StatusLine(bool quiet, uint64_t start_ns)
    : enabled_(!quiet), terminal_(isatty(STDERR_FILENO)), next_ns_(start_ns + interval_ns()) {}

void StatusLine::show(uint64_t now_ns, const Progress& p) {
  next_ns_ = now_ns + interval_ns();
  std::fprintf(stderr,
               "%s[ ebprof-record: %.1f s, %" PRIu64 " samples, %.2f MB, %" PRIu64 " lost ]%s",
               terminal_ ? "\r\033[K" : "", p.elapsed_s, p.samples, p.bytes / 1e6, p.lost,
               terminal_ ? "" : "\n");
  shown_ = true;
}

void StatusLine::clear() {
  if (shown_ && terminal_)
    std::fputs("\r\033[K", stderr);
  shown_ = false;
}

}  // namespace ebprof::record
