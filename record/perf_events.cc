#include "record/perf_events.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string>

#include "common/error.h"
#include "record/probe_events.h"
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

namespace {

struct KnownEvent {
  const char* name;
  uint32_t type;
  uint64_t config;
};

constexpr KnownEvent kEvents[] = {
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
};

std::string software_event_names() {
  std::string names;
  for (const auto& e : kEvents)
    if (e.type == PERF_TYPE_SOFTWARE)
      names += (names.empty() ? "" : ", ") + std::string(e.name);
  return names;
}

}  // namespace

uint64_t max_sample_rate() {
  std::ifstream in("/proc/sys/kernel/perf_event_max_sample_rate");
  uint64_t rate = 0;
  return in >> rate && rate > 0 ? rate : 1000;
}

EventSpec find_event(const std::string& name) {
  // perf's modifiers, which a tracepoint's CATEGORY:NAME never is: the
  // part before them names a perf event.
  std::string base = name;
  bool user = true, kernel = true;
  if (const size_t colon = name.rfind(':'); colon != std::string::npos) {
    const std::string modifiers = name.substr(colon + 1);
    if (!modifiers.empty() && modifiers.size() <= 2 &&
        modifiers.find_first_not_of("uk") == std::string::npos) {
      base = name.substr(0, colon);
      user = modifiers.find('u') != std::string::npos;
      kernel = modifiers.find('k') != std::string::npos;
    }
  }
  for (const auto& e : kEvents)
    if (base == e.name)
      return EventSpec{.kind = EventSpec::Kind::kPerf,
                       .name = name,
                       .type = e.type,
                       .config = e.config,
                       .exclude_user = !user,
                       .exclude_kernel = !kernel};
  if (name.find(':') != std::string::npos)
    return find_probe_event(name);
  std::string all;
  for (const auto& e : kEvents)
    all += (all.empty() ? "" : ", ") + std::string(e.name);
  throw Error("-e " + name + ": unknown event; known events: " + all);
}

namespace {

perf_event_attr sampling_attr(const EventSpec& event, const SamplingRate& rate) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = event.type;
  attr.config = event.config;
  attr.exclude_user = event.exclude_user;
  attr.exclude_kernel = event.exclude_kernel;
  attr.freq = rate.frequency != 0;
  if (attr.freq)
    attr.sample_freq = rate.frequency;
  else
    attr.sample_period = rate.period;
  // With a callchain in the sample type the kernel walks the stack once,
  // kernel and user together, before running the BPF program, and
  // bpf_get_stack() slices that walk instead of unwinding again for each
  // half. Nothing is written to a perf buffer: the program returns 0.
  attr.sample_type = PERF_SAMPLE_CALLCHAIN;
  attr.sample_max_stack = 127;
  return attr;
}

[[noreturn]] void throw_open_failure(const EventSpec& event, const SamplingRate& rate, int err) {
  switch (err) {
    case EACCES:
    case EPERM:
      throw Error(
          "permission denied opening perf events: run as root or grant CAP_PERFMON "
          "(kernel.perf_event_paranoid is " +
          sysctl("/proc/sys/kernel/perf_event_paranoid") + ")");
    case EINVAL:
      if (rate.frequency)
        throw Error("the kernel rejected sampling " + event.name + " at -F " +
                    std::to_string(rate.frequency) + " Hz (kernel.perf_event_max_sample_rate is " +
                    sysctl("/proc/sys/kernel/perf_event_max_sample_rate") +
                    "): lower -F or raise that sysctl");
      throw Error("the kernel rejected sampling " + event.name + " with -c " +
                  std::to_string(rate.period));
    case ENOENT:
    case EOPNOTSUPP:
      if (event.type == PERF_TYPE_HARDWARE)
        throw Error("-e " + event.name +
                    ": hardware events are not available here (no PMU, e.g. a VM without PMU "
                    "passthrough); software events are: " +
                    software_event_names());
      throw Error("-e " + event.name + ": this kernel does not support that event");
    default:
      throw_errno("perf_event_open(" + event.name + ")", err);
  }
}

}  // namespace

bool samples_per_task(const EventSpec& event) {
  return event.kind == EventSpec::Kind::kPerf &&
         !(event.type == PERF_TYPE_SOFTWARE && event.config == PERF_COUNT_SW_CPU_CLOCK);
}

std::optional<PerfEvent> open_task_event(const EventSpec& event, const SamplingRate& rate,
                                         uint32_t tid, bool on_exec) {
  perf_event_attr attr = sampling_attr(event, rate);
  attr.inherit = 1;  // the threads and children it starts, as perf's per-task events
  attr.disabled = on_exec;
  attr.enable_on_exec = on_exec;
  const int fd = static_cast<int>(
      syscall(__NR_perf_event_open, &attr, static_cast<pid_t>(tid), -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd >= 0)
    return PerfEvent{-1, UniqueFd(fd)};
  if (errno == ESRCH)
    return std::nullopt;  // it exited meanwhile
  throw_open_failure(event, rate, errno);
}

std::vector<PerfEvent> open_sampling_events(const EventSpec& event, const SamplingRate& rate,
                                            const std::vector<int>& cpus) {
  perf_event_attr attr = sampling_attr(event, rate);
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
  throw_open_failure(event, rate, err);
}

}  // namespace ebprof::record
