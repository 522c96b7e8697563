#pragma once

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/elf_file.h"

namespace ebprof::record {

// The JIT symbols of each process, read from the perf map in its own root
// (/proc/PID/root/tmp/perf-NSPID.map, NSPID being its pid in its own
// namespace) while it is alive. JIT compilers append as they compile: an
// address not found is looked up again after a re-read when the file grew;
// tries, found or not, are at most every kRereadIntervalNs per process.
class JitMaps {
 public:
  static constexpr uint64_t kRereadIntervalNs = 100'000'000;

  // `host_tmp`: the process's mount namespace is the recorder's, so its
  // /tmp is the recorder's too, and its map can be read there after it
  // exited. An address not named is kept for name_missed().
  const ElfSymbol* find(uint32_t pid, uint32_t namespace_pid, uint64_t ip, uint64_t now_ns,
                        bool host_tmp);

  // The processes with addresses find() could not name.
  std::vector<uint32_t> missed() const;
  // The symbols of `pid`'s map, read once more, that name addresses find()
  // could not: a JVM run with -XX:+DumpPerfMapAtExit writes its map as it
  // exits. Read through the process's root while it lives, else from the
  // recorder's /tmp where that is its /tmp (and the file its owner's or
  // root's). Those addresses are not asked again.
  std::vector<ElfSymbol> name_missed(uint32_t pid);
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
    // For name_missed(): its pid in its namespace, its owner (-1: unknown),
    // whether its /tmp is the recorder's, and the addresses not named, so
    // many at most.
    uint32_t namespace_pid = 0;
    uid_t uid = static_cast<uid_t>(-1);
    bool host_tmp = false;
    std::set<uint64_t> missed;
  };
  static constexpr size_t kMaxMissed = 4096;
  std::unordered_map<uint32_t, Table> tables_;
};

}  // namespace ebprof::record
