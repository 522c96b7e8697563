#include "record/jit_maps.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "common/perf_map.h"
#include "common/unique_fd.h"
#include "record/in_root.h"

namespace ebprof::record {
namespace {

// The owner of process `pid`; -1 when it is gone.
uid_t owner_of(uint32_t pid) {
  struct stat st {};
  return stat(("/proc/" + std::to_string(pid)).c_str(), &st) == 0 ? st.st_uid
                                                                  : static_cast<uid_t>(-1);
}

// Reads the perf map at `path` inside the root of process `pid` if it
// changed size since `size`. The file is written by the profiled process,
// which may be hostile: it is looked up inside that root (open_in_root: a
// container's /tmp linking to a host directory leads nowhere else), never
// through a symlink, and read_perf_map_file() checks what it is and that
// root or `uid` (the process's owner when first looked at) owns it.
bool read_perf_map(uint32_t pid, uid_t uid, const std::string& path, off_t& size,
                   std::string& out) {
  UniqueFd fd = open_in_process_root(pid, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  return fd && read_perf_map_file(fd, uid, size, out);
}

std::string map_name(uint32_t pid, uint32_t namespace_pid) {
  return perf_map_path(namespace_pid ? namespace_pid : pid);
}

}  // namespace

const ElfSymbol* JitMaps::find(uint32_t pid, uint32_t namespace_pid, uint64_t ip, uint64_t now_ns,
                               bool host_tmp) {
  Table& t = tables_[pid];
  if (const ElfSymbol* s = find_symbol(t.symbols, ip))
    return s;
  const ElfSymbol* found = nullptr;
  // Most processes have no map at all: looking again is rate-limited too.
  if (!t.read_at_ns || now_ns >= t.read_at_ns + kRereadIntervalNs) {
    if (!t.read_at_ns) {
      t.namespace_pid = namespace_pid;
      t.uid = owner_of(pid);
      t.host_tmp = host_tmp;
    }
    t.read_at_ns = now_ns;
    std::string text;
    if (read_perf_map(pid, t.uid, map_name(pid, namespace_pid), t.size, text)) {
      t.symbols = parse_perf_map(text);
      found = find_symbol(t.symbols, ip);
    }
  }
  if (!found && t.missed.size() < kMaxMissed)
    t.missed.insert(ip);
  return found;
}

std::vector<uint32_t> JitMaps::missed() const {
  std::vector<uint32_t> pids;
  for (const auto& [pid, t] : tables_)
    if (!t.missed.empty())
      pids.push_back(pid);
  return pids;
}

std::vector<ElfSymbol> JitMaps::name_missed(uint32_t pid) {
  auto it = tables_.find(pid);
  if (it == tables_.end() || it->second.missed.empty())
    return {};
  Table& t = it->second;
  const std::string path = map_name(pid, t.namespace_pid);
  std::string text;
  off_t size = -1;  // read whatever size it has now
  bool read = read_perf_map(pid, t.uid, path, size, text);
  if (!read && t.host_tmp && t.uid != static_cast<uid_t>(-1))
    read = read_perf_map_at(path, t.uid, size, text);  // gone: its /tmp is ours
  std::vector<ElfSymbol> named;
  if (read) {
    t.symbols = parse_perf_map(text);
    t.size = size;
    for (uint64_t ip : t.missed)
      if (const ElfSymbol* s = find_symbol(t.symbols, ip);
          s && (named.empty() || named.back().address != s->address))
        named.push_back(*s);
  }
  t.missed.clear();
  return named;
}

}  // namespace ebprof::record
