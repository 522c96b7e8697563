#include "report/debuginfod.h"

#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cstdlib>

namespace ebprof::report {

void Debuginfod::End::operator()(debuginfod_client* client) const {
  debuginfod_end(client);
}

std::unique_ptr<Debuginfod> Debuginfod::from_environment() {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  if (!urls || !*urls)
    return nullptr;
  debuginfod_client* client = debuginfod_begin();
  return client ? std::unique_ptr<Debuginfod>(new Debuginfod(client)) : nullptr;
}

std::string Debuginfod::find_debuginfo(const std::string& build_id) {
  if (build_id.empty())
    return "";
  char* path = nullptr;
  int fd = debuginfod_find_debuginfo(client_.get(),
                                     reinterpret_cast<const unsigned char*>(build_id.data()),
                                     static_cast<int>(build_id.size()), &path);
  if (fd < 0)
    return "";
  close(fd);
  std::string found = path ? path : "";
  std::free(path);
  return found;
}

}  // namespace ebprof::report
