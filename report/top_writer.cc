#include "report/top_writer.h"

#include <algorithm>
#include <cinttypes>
#include <map>
#include <set>
#include <string>

#include "common/error.h"
#include "report/text.h"

namespace ebprof::report {
namespace {

void write_header(std::ostream& out, const Profile& p, uint64_t shown, bool time) {
  const auto& info = p.info;
  if (time) {
    out << format("# %.3f s of time in %" PRIu64 " samples and intervals off CPU", shown / 1e6,
                  p.total_samples);
    if (p.total_samples != p.recorded_samples)
      out << format(" (of %" PRIu64 " recorded: filtered)", p.recorded_samples);
  } else {
    out << format("# %" PRIu64 " samples", shown);
    if (shown != p.recorded_samples)
      out << format(" (of %" PRIu64 " recorded: filtered)", p.recorded_samples);
  }
  const std::string what = !info.sampling         ? "time off CPU (" + info.off_cpu + ")"
                           : info.off_cpu.empty() ? info.event + " " + describe_rate(info)
                                                  : info.event + " " + describe_rate(info) +
                                                        " and time off CPU (" + info.off_cpu + ")";
  out << format(" of %s over %.2f s, %u CPUs\n", what.c_str(), duration_s(p), info.cpu_count);
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

struct Column {
  const char* key;
  const char* title;
  int width;  // 0: the last column, unpadded
};

constexpr Column kColumns[] = {
    {"comm", "Command", 15},
    {"pid", "Pid", 7},
    {"tid", "Tid", 7},
    {"cpu", "CPU", 3},
    {"dso", "Shared Object", 23},
    {"state", "State", 17},
    {"symbol", "Symbol", 0},
};

const Column& column(const std::string& key) {
  for (const Column& c : kColumns)
    if (key == c.key)
      return c;
  throw Error("--sort " + key + ": unknown key; use comm, pid, tid, cpu, dso, state, symbol");
}

// The value of `key` for a sample of `s` whose frame of interest is `f`
// (null for a stack without frames).
std::string value(const std::string& key, const SymbolizedStack& s, const Frame* f) {
  if (key == "comm")
    return s.comm;
  if (key == "pid")
    return std::to_string(s.pid);
  if (key == "tid")
    return std::to_string(s.tid);
  if (key == "cpu")
    return std::to_string(s.cpu);
  if (key == "dso")
    return f ? f->module : "[unknown]";
  if (key == "state")
    return state_name(s.off_cpu);
  return f ? std::string(f->kernel ? "[k] " : "[.] ") + f->name : "[.] [no stack]";
}

}  // namespace

std::vector<std::string> parse_sort_keys(const std::string& list) {
  std::vector<std::string> keys;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = std::min(list.find(',', start), list.size());
    std::string key = list.substr(start, comma - start);
    column(key);  // throws for an unknown key
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      keys.push_back(key);
    start = comma + 1;
  }
  // Like perf, the symbol comes last, where its width does not matter.
  std::stable_partition(keys.begin(), keys.end(), [](const auto& k) { return k != "symbol"; });
  return keys;
}

void write_top(std::ostream& out, const Profile& profile,
               const std::vector<SymbolizedStack>& stacks, const TopOptions& options) {
  struct Counts {
    uint64_t self = 0, total = 0;
  };
  std::map<std::vector<std::string>, Counts> rows;
  const bool per_frame = std::any_of(options.sort.begin(), options.sort.end(),
                                     [](const auto& k) { return k == "dso" || k == "symbol"; });
  auto key_of = [&](const SymbolizedStack& s, const Frame* f) {
    std::vector<std::string> key;
    for (const std::string& k : options.sort)
      key.push_back(value(k, s, f));
    return key;
  };
  uint64_t total = 0;
  for (const auto& s : stacks) {
    total += s.count;
    const Frame* leaf = s.frames.empty() ? nullptr : &s.frames[0];
    rows[key_of(s, leaf)].self += s.count;
    // Children: every row a frame of this stack falls in, once per stack
    // (a recursive function is not counted twice).
    std::set<std::vector<std::string>> seen;
    if (!per_frame || s.frames.empty())
      seen.insert(key_of(s, leaf));
    else
      for (const Frame& f : s.frames)
        seen.insert(key_of(s, &f));
    for (const auto& key : seen)
      rows[key].total += s.count;
  }
  std::vector<std::pair<std::vector<std::string>, Counts>> sorted(rows.begin(), rows.end());
  std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
    return options.children ? a.second.total > b.second.total : a.second.self > b.second.self;
  });
  // Rows with no self time only matter when sorting by children.
  if (!options.children)
    std::erase_if(sorted, [](const auto& r) { return r.second.self == 0; });
  if (options.rows && sorted.size() > options.rows)
    sorted.resize(options.rows);

  write_header(out, profile, total, options.time);
  std::string titles =
      options.time ? "# Children      Self   Time ms" : "# Children      Self   Samples";
  std::string dots = "# ........  ........  ........";
  for (const std::string& k : options.sort) {
    const Column& c = column(k);
    titles += format("  %-*s", c.width, c.title);
    dots += "  " + std::string(c.width ? c.width : 6, '.');
  }
  out << "#\n" << titles << "\n" << dots << "\n";
  for (const auto& [key, counts] : sorted) {
    out << format("  %7.2f%%  %7.2f%%  ", total ? 100.0 * counts.total / total : 0,
                  total ? 100.0 * counts.self / total : 0)
        << (options.time ? format("%8.1f", counts.self / 1000.0)
                         : format("%8" PRIu64, counts.self));
    // Values are streamed: demangled C++ names can be kilobytes long.
    for (size_t i = 0; i < key.size(); ++i) {
      const Column& c = column(options.sort[i]);
      out << "  " << key[i];
      if (c.width && static_cast<int>(key[i].size()) < c.width)
        out << std::string(c.width - key[i].size(), ' ');
    }
    out << '\n';
  }
  if (total != 0)
    out << "#\n# unnamed frames: "
        << describe_unnamed(unnamed_by_reason(stacks), total, options.time ? "us" : "samples")
        << "\n";
  if (total == 0)
    out << (profile.recorded_samples
                ? "# no samples left after filtering\n"
                : "# no samples: was the target idle, or did it exit at once?\n");
}

}  // namespace ebprof::report
