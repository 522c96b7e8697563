#include "report/locate/debuginfod.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cstdlib>

namespace ebprof::report {
namespace {

// libdebuginfod brings libcurl and its TLS and LDAP libraries: linking it
// tripled every report's start-up for a feature few runs ask for. It is
// loaded on first use instead, as elfutils' own libdw does.
struct Library {
  decltype(&debuginfod_begin) begin = nullptr;
  decltype(&debuginfod_find_debuginfo) find_debuginfo = nullptr;
  decltype(&debuginfod_end) end = nullptr;
};

const Library* library() {
  static const Library lib = [] {
    Library l;
    void* handle = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      return l;
    l.begin = reinterpret_cast<decltype(l.begin)>(dlsym(handle, "debuginfod_begin"));
    l.find_debuginfo =
        reinterpret_cast<decltype(l.find_debuginfo)>(dlsym(handle, "debuginfod_find_debuginfo"));
    l.end = reinterpret_cast<decltype(l.end)>(dlsym(handle, "debuginfod_end"));
    return l;
  }();
  return lib.begin && lib.find_debuginfo && lib.end ? &lib : nullptr;
}

}  // namespace

void Debuginfod::End::operator()(debuginfod_client* client) const {
  library()->end(client);
}

std::unique_ptr<Debuginfod> Debuginfod::from_environment(
    const std::function<void(const std::string&)>& warn) {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  if (!urls || !*urls)
    return nullptr;
  const Library* lib = library();
  if (!lib) {
    if (warn)
      warn(
          "DEBUGINFOD_URLS is set but libdebuginfod.so.1 cannot be loaded: apt-get install "
          "libdebuginfod1");
    return nullptr;
  }
  debuginfod_client* client = lib->begin();
  return client ? std::unique_ptr<Debuginfod>(new Debuginfod(client)) : nullptr;
}

std::string Debuginfod::find_debuginfo(const std::string& build_id) {
  if (build_id.empty())
    return "";
  char* path = nullptr;
  int fd = library()->find_debuginfo(client_.get(),
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
