#pragma once

#include <cstdint>

namespace ebprof::record {

struct Progress {
  double elapsed_s = 0;
  uint64_t samples = 0;
  uint64_t bytes = 0;
  uint64_t lost = 0;
};

// The one-line status on stderr while recording: rewritten in place twice a
// second on a terminal, a plain line every ten seconds otherwise (logs stay
// readable), nothing when quiet.
class StatusLine {
 public:
  // The first line comes one interval after `start_ns`.
  StatusLine(bool quiet, uint64_t start_ns);
  ~StatusLine() { clear(); }

  bool due(uint64_t now_ns) const { return enabled_ && now_ns >= next_ns_; }
  void show(uint64_t now_ns, const Progress& p);
  // Erases an in-place line, so what follows starts on a clean line.
  void clear();

 private:
  uint64_t interval_ns() const { return terminal_ ? 500'000'000ull : 10'000'000'000ull; }
  bool enabled_;
  bool terminal_;
  bool shown_ = false;
  uint64_t next_ns_;
};

}  // namespace ebprof::record
