#pragma once

// Where ebprof writes its files: never through a symbolic link, never into
// a device, FIFO or socket. The recorder runs as root: a link planted at
// its -o path must not make it create or overwrite the link's target, and
// -o /dev/null must not "succeed" with the recording thrown away.
//
// Every output is a new file made with O_CREAT|O_EXCL (which refuses an
// existing name, a link included, and opens no FIFO), mode 0600: either
// the output itself (the recorder's, which must exist under its name
// while it grows, to survive a crash), or a file beside it renamed over it
// when complete (rename(2) replaces a link, never its target).

#include <functional>
#include <ostream>
#include <string>

#include "common/unique_fd.h"

namespace ebprof {

// Throws Error (the problem and the fix, one line) unless `path` is absent
// or a regular file. `option` names the flag that gave it ("-o").
void check_output(const std::string& path, const std::string& option);

// Creates `path`, which must not exist. Throws Error when it does (whatever
// it is) or cannot be made.
UniqueFd create_new(const std::string& path, const std::string& option);

// A file written beside `path` and renamed over it by commit(): until then
// `path` is left as it was, and a ReplacingFile destroyed uncommitted
// removes what it wrote.
class ReplacingFile {
 public:
  ReplacingFile(std::string path, const std::string& option);
  ~ReplacingFile();
  ReplacingFile(ReplacingFile&& other) noexcept;
  ReplacingFile& operator=(ReplacingFile&&) = delete;
  ReplacingFile(const ReplacingFile&) = delete;
  ReplacingFile& operator=(const ReplacingFile&) = delete;

  // The new file's descriptor, once: whoever takes it writes and closes it.
  UniqueFd take_fd() { return std::move(fd_); }
  // Puts the new file in place of `path`. Throws Error when it cannot.
  void commit();

 private:
  std::string path_;
  std::string temp_;  // "" once committed
  UniqueFd fd_;
};

// Writes the file at `path` whole, through a ReplacingFile: `write` fills
// the stream, and the file takes `path`'s place only once all of it
// reached the disk. Throws Error (the path, the disk full) otherwise; what
// `write` throws leaves `path` as it was.
void write_replacing(const std::string& path, const std::string& option,
                     const std::function<void(std::ostream&)>& write);

}  // namespace ebprof
