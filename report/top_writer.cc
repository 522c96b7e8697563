#include "report/top_writer.h"

#include "report/text.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <map>
#include <string>
#include <tuple>

namespace ebprof::report {
namespace {

void write_header(std::ostream& out, const Profile& p) {
  const auto& info = p.info;
  out << format("# %" PRIu64 " samples of %s %s over %.2f s, %u CPUs\n", p.total_samples,
                info.event.c_str(), describe_rate(info).c_str(), duration_s(p), info.cpu_count);
  out << "# host " << info.hostname << ", kernel " << info.kernel_release << " (" << info.machine
      << "), recorded " << utc_time(info.start_realtime_ns) << " by ebprof " << info.writer_version
      << "\n";
  if (std::string lost = describe_losses(p); lost != "0")
    out << "# lost " << lost << "\n";
  if (std::string partial = describe_losses(p, true); partial != "0")
    out << "# partial stacks " << partial << "\n";
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
