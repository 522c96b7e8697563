#include "record/perf_events.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <string>

#include "common/error.h"
#include "record/proc_file.h"

namespace ebprof::record {
namespace {

int parse_cpu(std::string_view s, std::string_view list) {
  int cpu = -1;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), cpu);
  if (ec != std::errc() || end != s.data() + s.size() || cpu < 0)
    throw Error("bad CPU list '" + std::string(list) + "': expected e.g. 0-3,8");
  return cpu;
}

std::string sysctl(const char* path) {
  std::string value;
  if (try_read_proc_file(path, value) != 0)
    return "?";
  while (!value.empty() && value.back() == '\n')
    value.pop_back();
  return value;
}

}  // namespace

std::vector<int> parse_cpu_list(std::string_view list) {
  std::vector<int> cpus;
  while (!list.empty() && (list.back() == '\n' || list.back() == ' '))
    list.remove_suffix(1);
  std::string_view rest = list;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    size_t dash = item.find('-');
    int first = parse_cpu(item.substr(0, dash), list);
    int last = dash == std::string_view::npos ? first : parse_cpu(item.substr(dash + 1), list);
    if (last < first)
      throw Error("bad CPU list '" + std::string(list) + "': range runs backwards");
    for (int c = first; c <= last; ++c)
      cpus.push_back(c);
  }
  if (cpus.empty())
    throw Error("empty CPU list");
  return cpus;
}

std::vector<int> online_cpus() {
  return parse_cpu_list(read_proc_file("/sys/devices/system/cpu/online"));
}

std::vector<int> select_cpus(const std::string& list) {
  std::string online_list = read_proc_file("/sys/devices/system/cpu/online");
  online_list.erase(online_list.find_last_not_of("\n ") + 1);
  std::vector<int> online = parse_cpu_list(online_list);
  if (list.empty())
    return online;
  std::vector<int> wanted = parse_cpu_list(list);
  for (int cpu : wanted)
    if (std::find(online.begin(), online.end(), cpu) == online.end())
      throw Error("-C " + list + ": CPU " + std::to_string(cpu) +
                  " is not online (online: " + online_list + ")");
  return wanted;
}

std::vector<PerfEvent> open_cpu_clock_events(uint64_t frequency, const std::vector<int>& cpus) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = frequency;
  // With a callchain in the sample type the kernel walks the stack once,
  // kernel and user together, before running the BPF program, and
  // bpf_get_stack() slices that walk instead of unwinding again for each
  // half. Nothing is written to a perf buffer: the program returns 0.
  attr.sample_type = PERF_SAMPLE_CALLCHAIN;
  attr.sample_max_stack = 127;

  std::vector<PerfEvent> events;
  int err = 0;
  for (int cpu : cpus) {
    int fd =
        static_cast<int>(syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd >= 0) {
      events.push_back({cpu, UniqueFd(fd)});
    } else if (errno != ENODEV) {  // ENODEV: the CPU went offline; skip it
      err = errno;
      break;
    }
  }
  if (err == 0) {
    if (events.empty())
      throw Error("none of the requested CPUs is online");
    return events;
  }

  switch (err) {
    case EACCES:
    case EPERM:
      throw Error(
          "permission denied opening perf events: run as root or grant CAP_PERFMON "
          "(kernel.perf_event_paranoid is " +
          sysctl("/proc/sys/kernel/perf_event_paranoid") + ")");
    case EINVAL: {
      std::string max = sysctl("/proc/sys/kernel/perf_event_max_sample_rate");
      throw Error("the kernel rejected sampling at -F " + std::to_string(frequency) +
                  " Hz (kernel.perf_event_max_sample_rate is " + max +
                  "): lower -F or raise that sysctl");
    }
    case ENOENT:
    case EOPNOTSUPP:
      throw Error("this kernel does not support the cpu-clock perf event");
    default:
      throw_errno("perf_event_open(cpu-clock)", err);
  }
}

}  // namespace ebprof::record
