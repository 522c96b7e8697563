#include "report/run/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

namespace ebprof::report {

uint64_t default_memory_budget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0)
    return RLIM_INFINITY;
  return uint64_t(pages) * uint64_t(page) / 4 * 3;
}

bool memory_budget_holds() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#endif
#endif
  return true;
}

MemoryBudget::MemoryBudget(uint64_t bytes) : bytes_(bytes) {
  rlimit limit{};
  if (!memory_budget_holds() || getrlimit(RLIMIT_DATA, &limit) != 0)
    return;
  previous_ = limit.rlim_cur;
  limit.rlim_cur = std::min<rlim_t>({limit.rlim_cur, limit.rlim_max, bytes});
  set_ = setrlimit(RLIMIT_DATA, &limit) == 0;
}

void MemoryBudget::lift() {
  if (!set_)
    return;
  rlimit limit{};
  if (getrlimit(RLIMIT_DATA, &limit) == 0) {
    limit.rlim_cur = previous_;
    setrlimit(RLIMIT_DATA, &limit);
  }
  set_ = false;
}

}  // namespace ebprof::report
