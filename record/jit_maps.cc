#include "record/jit_maps.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <string>

#include "common/unique_fd.h"
#include "record/in_root.h"
#include "record/proc_file.h"

namespace ebprof::record {
namespace {

bool take_hex(std::string_view& s, uint64_t& value) {
  if (s.starts_with("0x"))
    s.remove_prefix(2);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, 16);
  if (ec != std::errc() || end == s.data() + s.size() || *end != ' ')
    return false;
  s.remove_prefix(static_cast<size_t>(end - s.data()) + 1);
  return true;
}

// Reads the perf map at `path` inside the root of process `pid` if it
// changed size since `size`. The file is written by the profiled process,
// which may be hostile: it is looked up inside that root (open_in_root: a
// container's /tmp linking to a host directory leads nowhere else), and
// it must be a regular file (not a FIFO that blocks, not a device that
// never ends, not a symlink), owned by root or the process's owner, and at
// most kMaxMapBytes.
bool read_perf_map(uint32_t pid, const std::string& path, off_t& size, std::string& out) {
  constexpr off_t kMaxMapBytes = 64 << 20;
  UniqueFd fd = open_in_process_root(pid, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  struct stat st {
  }, owner{};
  if (!fd || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == size ||
      st.st_size > kMaxMapBytes)
    return false;
  if (stat(("/proc/" + std::to_string(pid)).c_str(), &owner) != 0 ||
      (st.st_uid != 0 && st.st_uid != owner.st_uid))
    return false;
  out.resize(static_cast<size_t>(st.st_size));
  ssize_t n = pread(fd.get(), out.data(), out.size(), 0);
  if (n < 0)
    return false;
  out.resize(static_cast<size_t>(n));
  size = st.st_size;
  return true;
}

}  // namespace

std::vector<ElfSymbol> parse_perf_map(std::string_view text) {
  std::vector<ElfSymbol> out;
  while (!text.empty()) {
    std::string_view line = take_line(text);
    ElfSymbol s;
    if (!take_hex(line, s.address) || !take_hex(line, s.size) || line.empty())
      continue;
    s.name = std::string(line);
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.address < b.address; });
  return out;
}

const ElfSymbol* JitMaps::find(uint32_t pid, uint32_t namespace_pid, uint64_t ip, uint64_t now_ns) {
  Table& t = tables_[pid];
  if (const ElfSymbol* s = find_symbol(t.symbols, ip))
    return s;
  // Most processes have no map at all: looking again is rate-limited too.
  if (t.read_at_ns && now_ns < t.read_at_ns + kRereadIntervalNs)
    return nullptr;
  t.read_at_ns = now_ns;
  const std::string path =
      "/tmp/perf-" + std::to_string(namespace_pid ? namespace_pid : pid) + ".map";
  std::string text;
  if (!read_perf_map(pid, path, t.size, text))
    return nullptr;
  t.symbols = parse_perf_map(text);
  return find_symbol(t.symbols, ip);
}

}  // namespace ebprof::record
