#include "common/output_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ext/stdio_filebuf.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "common/error.h"

namespace ebprof {
namespace {

// What a non-regular file at an output path is, for the message.
const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode))
    return "a symbolic link (ebprof writes through none)";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  return "not a regular file";
}

}  // namespace

void check_output(const std::string& path, const std::string& option) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return;
    throw Error(errno_message("cannot write " + path, errno) + ": choose another path with " +
                option);
  }
  if (!S_ISREG(st.st_mode))
    throw Error(option + " " + path + " is " + kind_of(st.st_mode) +
                ": give the path of a regular file to write");
}

UniqueFd create_new(const std::string& path, const std::string& option) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) {
    const int err = errno;
    if (err == EEXIST)
      throw Error(path + " appeared while ebprof was making it: check who else writes there, or " +
                  "choose another path with " + option);
    throw Error(errno_message("cannot create " + path, err) + ": choose a writable path with " +
                option);
  }
  return fd;
}

ReplacingFile::ReplacingFile(std::string path, const std::string& option) : path_(std::move(path)) {
  check_output(path_, option);
  // Beside it, so that the rename stays on one file system.
  const size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  std::string temp = dir + "." + name + ".XXXXXX";
  std::vector<char> buffer(temp.begin(), temp.end());
  buffer.push_back('\0');
  // mkostemp: O_CREAT|O_EXCL, mode 0600.
  fd_ = UniqueFd(mkostemp(buffer.data(), O_CLOEXEC));
  if (!fd_)
    throw Error(errno_message("cannot write " + path_, errno) +
                ": choose a writable directory with " + option);
  temp_ = buffer.data();
}

ReplacingFile::ReplacingFile(ReplacingFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_(std::exchange(other.temp_, "")),
      fd_(std::move(other.fd_)) {}

ReplacingFile::~ReplacingFile() {
  if (!temp_.empty())
    ::unlink(temp_.c_str());
}

void ReplacingFile::commit() {
  if (::rename(temp_.c_str(), path_.c_str()) != 0)
    throw Error(errno_message("cannot write " + path_, errno) + ": choose another path");
  temp_.clear();
}

void write_replacing(const std::string& path, const std::string& option,
                     const std::function<void(std::ostream&)>& write) {
  ReplacingFile file(path, option);
  __gnu_cxx::stdio_filebuf<char> buffer(file.take_fd().release(), std::ios::out | std::ios::binary);
  std::ostream out(&buffer);
  write(out);
  out.flush();
  if (!out || !buffer.close())
    throw Error("cannot write " + path + ": the disk is full or the output was closed");
  file.commit();
}

}  // namespace ebprof
