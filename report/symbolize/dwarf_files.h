#pragma once

// The DWARF files of a report, each opened once. Opening one can take
// tens of milliseconds (libdw inflates compressed debug sections whole:
// 10 MB for Debian's libc6-dbg), so files asked for ahead of need open on
// worker threads while the report goes on unwinding and naming; a file
// asked for before a worker took it is opened by the asker.

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "report/symbolize/dwarf_lines.h"
#include "report/symbolize/inflated_cache.h"

namespace ebprof::report {

class DwarfFiles {
 public:
  explicit DwarfFiles(InflatedCache cache) : cache_(std::move(cache)) {}
  ~DwarfFiles();
  DwarfFiles(const DwarfFiles&) = delete;
  DwarfFiles& operator=(const DwarfFiles&) = delete;

  // Starts opening `path` on a worker, unless it is open or opening.
  void prefetch(const std::string& path);

  // The DWARF of `path`, waiting for a worker that is opening it; null
  // when the file has none (DwarfLines::open).
  DwarfLines* get(const std::string& path);

 private:
  enum class State : uint8_t { kQueued, kOpening, kOpen };
  struct File {
    std::string path;
    State state = State::kQueued;
    std::optional<DwarfLines> lines;
  };
  // Claims queued files and opens them until told to stop.
  void work();
  // Opens `file`, claimed by the caller (lock released meanwhile).
  void open(File& file, std::unique_lock<std::mutex>& lock);

  const InflatedCache cache_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::unordered_map<std::string, std::unique_ptr<File>> files_;
  std::deque<File*> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;  // started by the first prefetch
};

}  // namespace ebprof::report
