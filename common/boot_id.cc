#include "common/boot_id.h"

#include <fstream>

namespace ebprof {

std::string this_boot_id() {
  std::string id;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> id;
  return id;
}

}  // namespace ebprof
