#include "report/symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace ebprof::report {

std::string demangle(const std::string& name) {
  if (name.size() < 3 || name[0] != '_' || name[1] != 'Z')
    return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

}  // namespace ebprof::report
