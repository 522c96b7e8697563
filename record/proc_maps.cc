#include "record/proc_maps.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>

#include "record/proc_file.h"

namespace ebprof::record {
namespace {

// Consumes a hex number from the front of `s`.
bool take_hex(std::string_view& s, uint64_t& value) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, 16);
  if (ec != std::errc())
    return false;
  s.remove_prefix(end - s.data());
  return true;
}

// Consumes a space-delimited field from the front of `s`.
std::string_view take_field(std::string_view& s) {
  size_t start = s.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    s = {};
    return {};
  }
  s.remove_prefix(start);
  size_t end = s.find(' ');
  std::string_view field = s.substr(0, end);
  s.remove_prefix(end == std::string_view::npos ? s.size() : end);
  return field;
}

}  // namespace

std::vector<format::Mapping> parse_proc_maps(std::string_view text) {
  std::vector<format::Mapping> out;
  while (!text.empty()) {
    std::string_view line = take_line(text);

    // start-end perms offset dev inode [path]; the path may contain spaces.
    format::Mapping m;
    if (!take_hex(line, m.start) || line.empty() || line[0] != '-')
      continue;
    line.remove_prefix(1);
    if (!take_hex(line, m.end))
      continue;
    std::string_view perms = take_field(line);
    std::string_view offset = take_field(line);
    take_field(line);  // dev
    take_field(line);  // inode
    if (perms.size() < 3 || perms[2] != 'x' || !take_hex(offset, m.file_offset))
      continue;
    size_t path_start = line.find_first_not_of(' ');
    if (path_start != std::string_view::npos)
      m.path = std::string(line.substr(path_start));
    out.push_back(std::move(m));
  }
  return out;
}

format::ProcessInfo read_process(uint32_t pid, uint64_t now_ns, ElfIdentities& identities) {
  format::ProcessInfo p;
  p.pid = pid;
  p.captured_at_ns = now_ns;
  const std::string dir = "/proc/" + std::to_string(pid);
  std::string text;
  if (try_read_proc_file(dir + "/comm", text) == 0) {
    while (!text.empty() && text.back() == '\n')
      text.pop_back();
    p.comm = text;
  }
  if (int err = try_read_proc_file(dir + "/maps", text)) {
    p.maps_error = err == ENOENT || err == ESRCH
                       ? std::string(format::kMapsErrorExited)
                       : "cannot read " + dir + "/maps: " + std::strerror(err);
    return p;
  }
  p.place = read_place(pid);
  p.mappings = parse_proc_maps(text);
  for (format::Mapping& m : p.mappings) {
    ElfIdentity id = identities.lookup(pid, m);
    m.build_id = std::move(id.build_id);
    m.debuglink = std::move(id.debuglink);
  }
  return p;
}

namespace {

uint64_t namespace_inode(const std::string& link) {
  struct stat st {};
  return stat(link.c_str(), &st) == 0 ? st.st_ino : 0;
}

}  // namespace

uint32_t parse_namespace_pid(std::string_view status) {
  while (!status.empty()) {
    std::string_view line = take_line(status);
    if (!line.starts_with("NStgid:"))
      continue;
    size_t last = line.find_last_of(" \t");
    std::string_view value = line.substr(last == std::string_view::npos ? 7 : last + 1);
    uint32_t pid = 0;
    std::from_chars(value.data(), value.data() + value.size(), pid);
    return pid;
  }
  return 0;
}

format::ProcessPlace read_place(uint32_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  format::ProcessPlace place;
  place.pid_namespace = namespace_inode(dir + "/ns/pid");
  place.mount_namespace = namespace_inode(dir + "/ns/mnt");
  std::string status;
  if (try_read_proc_file(dir + "/status", status) == 0)
    place.namespace_pid = parse_namespace_pid(status);
  char root[4096];
  ssize_t n = readlink((dir + "/root").c_str(), root, sizeof root);
  if (n > 0)
    place.root.assign(root, static_cast<size_t>(n));
  return place;
}

std::optional<uint32_t> read_tgid(uint32_t id) {
  std::string status;
  if (try_read_proc_file("/proc/" + std::to_string(id) + "/status", status) != 0)
    return std::nullopt;
  std::string_view text = status;
  while (!text.empty()) {
    std::string_view line = take_line(text);
    if (!line.starts_with("Tgid:"))
      continue;
    std::string_view value = line.substr(5);
    value.remove_prefix(std::min(value.find_first_not_of(" \t"), value.size()));
    uint32_t tgid = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), tgid);
    return ec == std::errc() ? std::optional(tgid) : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace ebprof::record
