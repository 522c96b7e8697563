#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/elf_file.h"

namespace ebprof::record {

// perf's JIT symbol map format, as V8, the JVM's perf-map-agent, LuaJIT and
// others write /tmp/perf-PID.map: "START SIZE NAME" per line, START and SIZE
// in hex (with or without 0x), NAME to the end of the line. Malformed lines
// are skipped; the result is sorted by address.
std::vector<ElfSymbol> parse_perf_map(std::string_view text);

// The JIT symbols of each process, read from the perf map in its own root
// (/proc/PID/root/tmp/perf-NSPID.map, NSPID being its pid in its own
// namespace) while it is alive. JIT compilers append as they compile: an
// address not found is looked up again after a re-read when the file grew;
// tries, found or not, are at most every kRereadIntervalNs per process.
class JitMaps {
 public:
  static constexpr uint64_t kRereadIntervalNs = 100'000'000;

  const ElfSymbol* find(uint32_t pid, uint32_t namespace_pid, uint64_t ip, uint64_t now_ns);
  // Lets go of the tables of the processes `gone` says have gone (a
  // recorder that runs for weeks sees millions come and go); returns them.
  template <typename Gone>
  std::vector<uint32_t> forget_if(Gone gone) {
    std::vector<uint32_t> pids;
    std::erase_if(tables_, [&](const auto& entry) {
      if (!gone(entry.first))
        return false;
      pids.push_back(entry.first);
      return true;
    });
    return pids;
  }

 private:
  struct Table {
    std::vector<ElfSymbol> symbols;
    off_t size = -1;  // of the file when read; -1: never read
    uint64_t read_at_ns = 0;
  };
  std::unordered_map<uint32_t, Table> tables_;
};

}  // namespace ebprof::record
