#include "common/perf_map.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

namespace ebprof {
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

}  // namespace

std::vector<ElfSymbol> parse_perf_map(std::string_view text) {
  std::vector<ElfSymbol> out;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
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

std::string perf_map_path(uint32_t pid) {
  return "/tmp/perf-" + std::to_string(pid) + ".map";
}

bool read_perf_map_at(const std::string& path, uid_t uid, off_t& size, std::string& text) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  return read_perf_map_file(fd, uid, size, text);
}

bool read_perf_map_file(const UniqueFd& fd, uid_t uid, off_t& size, std::string& text) {
  constexpr off_t kMaxMapBytes = 64 << 20;
  struct stat st {};
  if (!fd || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == size ||
      st.st_size > kMaxMapBytes || (st.st_uid != 0 && st.st_uid != uid))
    return false;
  text.resize(static_cast<size_t>(st.st_size));
  const ssize_t n = pread(fd.get(), text.data(), text.size(), 0);
  if (n < 0)
    return false;
  text.resize(static_cast<size_t>(n));
  size = st.st_size;
  return true;
}

}  // namespace ebprof
