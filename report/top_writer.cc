#include "report/top_writer.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <map>
#include <string>
#include <tuple>

namespace ebprof::report {
namespace {

// printf into a string, for short fixed-layout fields (names are streamed).
std::string format(const char* fmt, auto... args) {
  char buf[256];
  int n = std::snprintf(buf, sizeof buf, fmt, args...);
  if (n < static_cast<int>(sizeof buf))
    return buf;
  std::string out(n, '\0');
  std::snprintf(out.data(), n + 1, fmt, args...);
  return out;
}

std::string start_time(const format::RecordingInfo& info) {
  time_t t = static_cast<time_t>(info.start_realtime_ns / 1'000'000'000);
  char buf[64];
  tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

double duration_s(const Profile& p) {
  uint64_t end = p.end ? p.end->end_monotonic_ns : p.last_sample_ns;
  return end > p.info.start_monotonic_ns ? (end - p.info.start_monotonic_ns) / 1e9 : 0;
}

void write_header(std::ostream& out, const Profile& p) {
  const auto& info = p.info;
  out << format("# %" PRIu64 " samples of %s at %" PRIu64 " Hz over %.2f s, %u CPUs\n",
                p.total_samples, info.event.c_str(), info.sample_frequency, duration_s(p),
                info.cpu_count);
  out << "# host " << info.hostname << ", kernel " << info.kernel_release << " (" << info.machine
      << "), recorded " << start_time(info) << " by ebprof " << info.writer_version << "\n";
  uint64_t lost = 0;
  std::string causes;
  if (p.end) {
    for (const auto& l : p.end->losses) {
      if (l.count == 0)
        continue;
      lost += l.count;
      causes += format("%s%s: %" PRIu64, causes.empty() ? "" : ", ", l.cause.c_str(), l.count);
    }
  }
  if (lost)
    out << "# lost " << lost << " (" << causes << ")\n";
  if (!p.end)
    out << "# recording has no end frame: the recorder was killed or the file is cut\n";
  if (!p.warning.empty())
    out << "# warning: " << p.warning << "\n";
}

}  // namespace

void write_top(std::ostream& out, const Profile& profile,
               const std::vector<SymbolizedStack>& stacks, const TopOptions& options) {
  struct Row {
    std::string comm, module, symbol;
    bool kernel;
    auto operator<=>(const Row&) const = default;
  };
  std::map<Row, uint64_t> self;
  uint64_t total = 0;
  for (const auto& s : stacks) {
    Row row = s.frames.empty()
                  ? Row{s.comm, "[unknown]", "[no stack]", false}
                  : Row{s.comm, s.frames[0].module, s.frames[0].name, s.frames[0].kernel};
    self[row] += s.count;
    total += s.count;
  }
  std::vector<std::pair<Row, uint64_t>> rows(self.begin(), self.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (options.rows && rows.size() > options.rows)
    rows.resize(options.rows);

  write_header(out, profile);
  out << "#\n# Overhead   Samples  Command          Shared Object            Symbol\n"
      << "# ........  ........  ...............  .......................  ......\n";
  for (const auto& [row, count] : rows) {
    double pct = total ? 100.0 * count / total : 0;
    // The symbol is streamed: demangled C++ names can be kilobytes long.
    out << format("  %7.2f%%  %8" PRIu64 "  %-15s  %-23s  %s ", pct, count, row.comm.c_str(),
                  row.module.c_str(), row.kernel ? "[k]" : "[.]")
        << row.symbol << '\n';
  }
  if (total == 0)
    out << "# no samples: was the target idle, or did it exit at once?\n";
}

}  // namespace ebprof::report
