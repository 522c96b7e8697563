#include "report/diff.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <map>

#include "common/error.h"
#include "report/folded_writer.h"
#include "report/text.h"

namespace ebprof::report {
namespace {

// What a frame is matched by. Unnamed frames match by module alone: their
// names carry offsets and reasons that need not agree across recordings.
std::string frame_key(const Frame& f, Join join) {
  if (join == Join::kAddress && !f.kernel && !f.build_id.empty())
    return hex_bytes(f.build_id) + format("+%" PRIx64, f.file_offset);
  return f.resolved ? f.name : "[unknown] " + f.module;
}

std::string stack_key(const std::string& comm, const Frames& frames, Join join) {
  std::string key = comm;
  for (const Frame& f : frames) {
    key += '\n';
    key += frame_key(f, join);
  }
  return key;
}

// A value with as many decimals as it needs, at most two.
std::string number(double v) {
  std::string s = format("%.2f", v);
  while (s.back() == '0')
    s.pop_back();
  if (s.back() == '.')
    s.pop_back();
  return s == "-0" ? "0" : s;
}

}  // namespace

Normalize parse_normalize(const std::string& name) {
  if (name == "none")
    return Normalize::kNone;
  if (name == "total")
    return Normalize::kTotal;
  if (name == "per-second")
    return Normalize::kPerSecond;
  if (name == "per-cpu-second")
    return Normalize::kPerCpuSecond;
  throw Error("--normalize " + name + ": use none, total, per-second or per-cpu-second");
}

Join parse_join(const std::string& name) {
  if (name == "symbol")
    return Join::kSymbol;
  if (name == "address")
    return Join::kAddress;
  throw Error("--join " + name + ": use symbol or address");
}

double sample_value(std::span<const Profile> side, uint64_t total, Normalize n) {
  double seconds = 0, cpu_seconds = 0;
  for (const Profile& p : side) {
    seconds += duration_s(p);
    cpu_seconds += duration_s(p) * std::max<uint32_t>(p.info.cpu_count, 1);
  }
  switch (n) {
    case Normalize::kNone:
      return 1;
    case Normalize::kTotal:
      return total ? 100.0 / total : 0;
    case Normalize::kPerSecond:
      return seconds > 0 ? 1 / seconds : 0;
    case Normalize::kPerCpuSecond:
      // Samples are not seconds: a share of CPU time needs the rate.
      return cpu_seconds > 0 ? 1 / cpu_seconds : 0;
  }
  return 1;
}

std::string value_unit(Normalize n, const std::string& unit) {
  switch (n) {
    case Normalize::kNone:
      return unit;
    case Normalize::kTotal:
      return "%";
    case Normalize::kPerSecond:
      return unit + "/s";
    case Normalize::kPerCpuSecond:
      return unit + "/CPU-s";
  }
  return "";
}

std::vector<DiffStack> join_stacks(const std::vector<SymbolizedStack>& base,
                                   const std::vector<SymbolizedStack>& now, Join join) {
  std::map<std::string, size_t> index;
  std::vector<DiffStack> out;
  auto add = [&](const SymbolizedStack& s, bool is_new) {
    auto [it, inserted] = index.try_emplace(stack_key(s.comm, s.frames, join), out.size());
    if (inserted)
      out.push_back({s.comm, s.frames});
    DiffStack& d = out[it->second];
    (is_new ? d.now : d.base) += s.count;
    if (is_new)
      d.frames = s.frames;  // names as the new recording has them
  };
  for (const SymbolizedStack& s : base)
    add(s, false);
  for (const SymbolizedStack& s : now)
    add(s, true);
  return out;
}

void write_diff_folded(std::ostream& out, const std::vector<DiffStack>& stacks, DiffScale scale) {
  std::map<std::string, std::pair<double, uint64_t>> lines;
  for (const DiffStack& d : stacks) {
    auto& [base, now] = lines[folded_line(d.comm, 0, d.frames, {})];
    base += d.base * scale.base_in_new_samples();
    now += d.now;
  }
  for (const auto& [line, counts] : lines)
    out << line << ' ' << number(counts.first) << ' ' << counts.second << '\n';
}

void write_diff_top(std::ostream& out, const Profile& base, const Profile& now,
                    const std::vector<DiffStack>& stacks, DiffScale scale, Normalize normalize,
                    int rows, const std::string& counted) {
  struct Row {
    std::string name, module;
    double base = 0, now = 0;
    bool in_base = false, in_new = false;
  };
  std::map<std::pair<std::string, std::string>, Row> by_function;
  for (const DiffStack& d : stacks) {
    const Frame* leaf = d.frames.empty() ? nullptr : &d.frames[0];
    std::string name = leaf ? (leaf->resolved ? leaf->name : "[unknown]") : "[no stack]";
    std::string module = leaf ? leaf->module : "";
    Row& r = by_function[{name, module}];
    r.name = name;
    r.module = module;
    r.base += d.base * scale.base;
    r.now += d.now * scale.now;
    r.in_base |= d.base > 0;
    r.in_new |= d.now > 0;
  }
  std::vector<Row> changed, appeared, vanished;
  for (auto& [key, r] : by_function)
    (r.in_base && r.in_new ? changed : r.in_new ? appeared : vanished).push_back(r);
  for (auto* section : {&changed, &appeared, &vanished})
    std::stable_sort(section->begin(), section->end(), [](const Row& a, const Row& b) {
      return std::fabs(a.now - a.base) > std::fabs(b.now - b.base);
    });

  out << format("# base: %" PRIu64 " samples over %.2f s (%s)\n", base.total_samples,
                duration_s(base), base.path.c_str());
  out << format("# new:  %" PRIu64 " samples over %.2f s (%s)\n", now.total_samples,
                duration_s(now), now.path.c_str());
  out << "# values: self " << counted << " of each function, "
      << (normalize == Normalize::kTotal ? "as % of each recording's own total; delta in points"
                                         : "in " + value_unit(normalize, counted))
      << "\n";
  auto section = [&](const char* title, const std::vector<Row>& list) {
    if (list.empty())
      return;
    out << "#\n# " << title << "\n#\n";
    out << format("# %12s %12s %12s  %-24s %s\n", "base", "new", "delta", "module", "function");
    int shown = 0;
    for (const Row& r : list) {
      if (rows > 0 && shown++ >= rows)
        break;
      out << format("  %12.2f %12.2f %+12.2f  %-24s %s\n", r.base, r.now, r.now - r.base,
                    r.module.c_str(), r.name.c_str());
    }
  };
  section("changed", changed);
  section("appeared (only in the new recording)", appeared);
  section("vanished (only in the base recording)", vanished);
}

}  // namespace ebprof::report
