#pragma once

#include <functional>
#include <memory>
#include <string>

struct debuginfod_client;

namespace ebprof::report {

// Fetches separate debuginfo by build-id from the servers DEBUGINFOD_URLS
// names, through libdebuginfod, which caches what it downloads. Opt-in, as
// for gdb and perf: without DEBUGINFOD_URLS nothing is asked of the network.
class Debuginfod {
 public:
  // Null when DEBUGINFOD_URLS is unset or empty, or (said through `warn`)
  // when libdebuginfod is not installed.
  static std::unique_ptr<Debuginfod> from_environment(
      const std::function<void(const std::string&)>& warn = {});

  // A local path of the debuginfo for `build_id` (raw bytes), or "" when no
  // server has it. The caller checks the file's build-id, as for any other.
  std::string find_debuginfo(const std::string& build_id);

 private:
  struct End {
    void operator()(debuginfod_client* client) const;
  };
  explicit Debuginfod(debuginfod_client* client) : client_(client) {}
  std::unique_ptr<debuginfod_client, End> client_;
};

}  // namespace ebprof::report
