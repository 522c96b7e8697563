#include "report/write/diff_writer.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <map>
#include <set>

#include "common/text.h"
#include "report/write/folded_writer.h"
#include "report/write/frame_text.h"

namespace ebprof::report {
namespace {

struct Row {
  std::string name, module;
  double base = 0, now = 0;
  bool in_base = false, in_new = false;
};

// Rows by function, in three sections: changed, appeared, vanished; each
// by absolute difference. A function's value is what its stacks' leaf
// frames add up to, or with `children` what the stacks it is anywhere on
// do: a shift from one caller to another shows only there.
std::array<std::vector<Row>, 3> rows_of(const DiffProfile& diff, bool children) {
  std::map<std::pair<std::string, std::string>, Row> by_function;
  std::set<std::pair<std::string, std::string>> seen;  // a stack's functions, once each
  auto add = [&](const DiffStack& d, const std::string& name, const std::string& module) {
    if (!seen.emplace(name, module).second)
      return;
    Row& r = by_function[{name, module}];
    r.name = name;
    r.module = module;
    r.base += d.base * diff.scale.base;
    r.now += d.now * diff.scale.now;
    r.in_base |= d.base > 0;
    r.in_new |= d.now > 0;
  };
  for (const DiffStack& d : diff.stacks) {
    seen.clear();
    if (d.frames.empty()) {
      add(d, "[no stack]", "");
      continue;
    }
    for (const Frame& f : d.frames) {
      if (f.synthetic())
        continue;
      add(d, f.named() ? frame_name(f) : "[unknown]", f.module);
      if (!children)
        break;
    }
  }
  std::array<std::vector<Row>, 3> sections;
  for (auto& [key, r] : by_function)
    sections[r.in_base && r.in_new ? 0 : r.in_new ? 1 : 2].push_back(r);
  for (auto& section : sections)
    std::stable_sort(section.begin(), section.end(), [](const Row& a, const Row& b) {
      return std::fabs(a.now - a.base) > std::fabs(b.now - b.base);
    });
  return sections;
}

}  // namespace

std::string value_unit(Normalize n, Unit unit) {
  const std::string counted = unit_name(unit);
  switch (n) {
    case Normalize::kNone:
      return counted;
    case Normalize::kTotal:
      return "%";
    case Normalize::kPerSecond:
      return counted + "/s";
    case Normalize::kPerCpuSecond:
      return counted + "/CPU-s";
  }
  return "";
}

void write_diff_folded(std::ostream& out, const DiffProfile& diff) {
  FoldedLines lines({});
  std::vector<std::pair<double, uint64_t>> counts;
  for (const DiffStack& d : diff.stacks) {
    const size_t line = lines.add(d.comm, 0, d.frames);
    counts.resize(lines.size());
    counts[line].first += d.base * diff.scale.base_in_new();
    counts[line].second += d.now;
  }
  // Whole counts, the base's scaled to the new side's as difffolded.pl -n
  // scales them: its consumers (flamegraph.pl) read integers only. A stack
  // that rounds to nothing on both sides is left out.
  for (size_t line : lines.sorted()) {
    const long long base = std::llround(counts[line].first);
    if (base == 0 && counts[line].second == 0)
      continue;
    lines.write(out, line);
    out << ' ' << base << ' ' << counts[line].second << '\n';
  }
}

void write_diff_top(std::ostream& out, const DiffProfile& diff, size_t rows, bool children) {
  const std::string counted = unit_name(diff.unit);
  out << string_printf("# base: %" PRIu64 " samples over %.2f s (%s)\n", diff.base.samples,
                       diff.base.duration_s, diff.base.path.c_str());
  out << string_printf("# new:  %" PRIu64 " samples over %.2f s (%s)\n", diff.now.samples,
                       diff.now.duration_s, diff.now.path.c_str());
  out << "# values: " << (children ? "children (stacks it is on)" : "self") << " " << counted
      << " of each function, "
      << (diff.normalize == Normalize::kTotal
              ? "as % of each recording's own total; delta in points"
              : "in " + value_unit(diff.normalize, diff.unit))
      << "\n";
  const char* titles[] = {"changed", "appeared (only in the new recording)",
                          "vanished (only in the base recording)"};
  const std::array<std::vector<Row>, 3> sections = rows_of(diff, children);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].empty())
      continue;
    out << "#\n# " << titles[i] << "\n#\n";
    out << string_printf("# %12s %12s %12s  %-24s %s\n", "base", "new", "delta", "module",
                         "function");
    size_t shown = 0;
    for (const Row& r : sections[i]) {
      if (rows > 0 && shown++ >= rows)
        break;
      out << string_printf("  %12.2f %12.2f %+12.2f  %-24s %s\n", r.base, r.now, r.now - r.base,
                           r.module.c_str(), r.name.c_str());
    }
  }
}

}  // namespace ebprof::report
