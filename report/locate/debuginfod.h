#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ebprof::report {

// Fetches separate debuginfo by build-id from the servers DEBUGINFOD_URLS
// names, through libdebuginfod, which caches what it downloads. Opt-in, as
// for gdb and perf: without DEBUGINFOD_URLS nothing is asked of the network.
//
// A server that does not answer must not hold a report for long: the
// questions run in parallel on a few threads (each with a client of its
// own), all within one deadline counted from the first question, after
// which every transfer still running is abandoned.
class Debuginfod {
 public:
  struct Options {
    double deadline_s = 30;  // --debuginfod-timeout
    // Told once when the servers keep the report waiting, and what it waits for.
    std::function<void(const std::string&)> say;
  };

  // Null when DEBUGINFOD_URLS is unset or empty, or (said through `warn`)
  // when libdebuginfod is not installed.
  static std::unique_ptr<Debuginfod> from_environment(
      Options options, const std::function<void(const std::string&)>& warn = {});
  ~Debuginfod();
  Debuginfod(const Debuginfod&) = delete;
  Debuginfod& operator=(const Debuginfod&) = delete;

  // Starts asking for `build_id` (raw bytes) without waiting for the answer.
  void request(const std::string& build_id);

  // A local path of the debuginfo for `build_id`, or "" when no server has
  // it or none answered before the deadline. Asks, if request() did not.
  // The caller checks the file's build-id, as for any other.
  std::string find_debuginfo(const std::string& build_id);

  // What the servers left unanswered, one line; "" when they answered all.
  std::string summary() const;

  static constexpr size_t kThreads = 4;

 private:
  explicit Debuginfod(Options options) : options_(std::move(options)) {}
  struct Query {
    bool done = false;
    bool answered = false;  // done before the deadline: found, or not on any server
    std::string path;
  };
  void work();
  bool past_deadline() const;

  Options options_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Query> queries_;  // by build-id
  std::deque<std::string> queue_;
  std::vector<std::thread> workers_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;  // set by the first question
  bool said_waiting_ = false;
  bool stopping_ = false;
};

}  // namespace ebprof::report
