#include "record/proc_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "common/error.h"
#include "common/unique_fd.h"

namespace ebprof::record {

namespace {

// Hands `path`'s bytes to `each` a read at a time; the errno of a failure,
// or 0. /proc and /sys files have no size up front.
int read_pieces(const std::string& path, const std::function<void(std::string_view)>& each) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd)
    return errno;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0)
      return 0;
    each({buf, static_cast<size_t>(n)});
  }
}

}  // namespace

int try_read_proc_file(const std::string& path, std::string& out) {
  out.clear();
  return read_pieces(path, [&](std::string_view piece) { out.append(piece); });
}

std::string read_proc_file(const std::string& path) {
  std::string out;
  if (int err = try_read_proc_file(path, out))
    throw_errno("reading " + path, err);
  return out;
}

void read_proc_lines(const std::string& path, const std::function<void(std::string_view)>& each) {
  std::string pending;  // a line cut by the end of a read, then whole ones
  const int err = read_pieces(path, [&](std::string_view piece) {
    pending.append(piece);
    std::string_view text = pending;
    for (size_t eol; (eol = text.find('\n')) != std::string_view::npos;) {
      each(text.substr(0, eol));
      text.remove_prefix(eol + 1);
    }
    pending.erase(0, pending.size() - text.size());
  });
  if (err)
    throw_errno("reading " + path, err);
  if (!pending.empty())
    each(pending);
}

std::string_view take_line(std::string_view& text) {
  size_t eol = text.find('\n');
  std::string_view line = text.substr(0, eol);
  text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
  return line;
}

}  // namespace ebprof::record
