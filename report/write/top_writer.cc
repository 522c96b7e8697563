#include "report/write/top_writer.h"

#include <algorithm>
#include <cinttypes>
#include <map>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "common/error.h"
#include "common/text.h"
#include "report/write/frame_text.h"

namespace ebprof::report {
namespace {

// What the header says of samples the report left out: the idle task's,
// which a report leaves out unasked, apart from those filters dropped.
std::string left_out(const RecordingSummary& s, uint64_t shown) {
  if (shown == s.recorded_samples)
    return "";
  const std::string idle = count_of(s.idle_samples, "sample", "samples") + " of the idle task";
  if (s.idle_samples == 0)
    return string_printf(" (of %" PRIu64 " recorded: filtered)", s.recorded_samples);
  if (shown + s.idle_samples == s.recorded_samples)
    return string_printf(" (of %" PRIu64 " recorded: %s left out, --include-idle counts them)",
                         s.recorded_samples, idle.c_str());
  return string_printf(" (of %" PRIu64 " recorded: filtered, %s among them)", s.recorded_samples,
                       idle.c_str());
}

void write_header(std::ostream& out, const Profile& p, uint64_t shown, bool following) {
  const RecordingSummary& s = p.summary;
  if (p.unit == Unit::kMicroseconds) {
    out << string_printf("# %.3f s of time in %s and intervals off CPU", shown / 1e6,
                         count_of(s.samples, "sample", "samples").c_str())
        << left_out(s, s.samples);
  } else if (p.unit == Unit::kEvents) {
    out << "# " << count_of(shown, "event", "events") << " in "
        << count_of(s.samples, "sample", "samples") << left_out(s, s.samples);
  } else {
    out << "# " << count_of(shown, "sample", "samples") << left_out(s, shown);
  }
  const std::string what = !s.sampling         ? "time off CPU (" + s.off_cpu + ")"
                           : s.off_cpu.empty() ? s.event + " " + describe_rate(s)
                                               : s.event + " " + describe_rate(s) +
                                                     " and time off CPU (" + s.off_cpu + ")";
  out << string_printf(" of %s over %.2f s, %u CPUs\n", what.c_str(), s.duration_s, s.cpu_count);
  out << "# host " << s.hostname << ", kernel " << s.kernel_release << " (" << s.machine
      << "), recorded " << utc_time(s.start_realtime_ns) << " by ebprof " << s.writer_version
      << "\n";
  if (std::string lost = describe_losses(s.losses); lost != "0")
    out << "# lost " << lost << "\n";
  if (std::string partial = describe_losses(s.losses, true); partial != "0")
    out << "# partial stacks " << partial << "\n";
  if (!s.ended)
    out << (following
                ? "# following: the recorder is writing it\n"
                : "# recording has no end frame: the recorder was killed or the file is cut\n");
  if (!s.warning.empty())
    out << "# warning: " << s.warning << "\n";
  if (!s.overlap.empty())
    out << "# " << s.overlap << " (" << count_of(s.duplicate_samples, "sample", "samples")
        << " left out)\n";
  for (const auto& [why, processes] : s.python_not_read)
    out << "# Python frames not read in " << count_of(processes, "process", "processes") << ": "
        << why << "\n";
}

struct Column {
  SortKey key;
  const char* name;   // as --sort takes it
  const char* title;  // as the table heads it
  int width;          // 0: the last column, unpadded
};

// clang-format off
constexpr Column kColumns[] = {
    {SortKey::kComm, "comm", "Command", 15},
    {SortKey::kPid, "pid", "Pid", 7},
    {SortKey::kTid, "tid", "Tid", 7},
    {SortKey::kCpu, "cpu", "CPU", 3},
    {SortKey::kCgroup, "cgroup", "Cgroup", 31},
    {SortKey::kDso, "dso", "Shared Object", 23},
    {SortKey::kState, "state", "State", 17},
    {SortKey::kSymbol, "symbol", "Symbol", 0},
};
// clang-format on

const Column& column(SortKey key) {
  for (const Column& c : kColumns)
    if (key == c.key)
      return c;
  return kColumns[0];
}

// The value of `key` for a sample of `s` whose frame of interest is `f`
// (null for a stack without frames).
std::string value(SortKey key, const Profile& p, const ProfileStack& s, const Frame* f) {
  switch (key) {
    case SortKey::kComm:
      return p.comm(s.key);
    case SortKey::kPid:
      return std::to_string(s.key.stack.pid);
    case SortKey::kTid:
      return std::to_string(s.key.tid);
    case SortKey::kCpu:
      return std::to_string(s.key.cpu);
    case SortKey::kCgroup:
      return p.cgroup(s.key).empty() ? "[none]" : p.cgroup(s.key);
    case SortKey::kDso:
      return f ? f->module : "[unknown]";
    case SortKey::kState:
      return state_name(s.key.state);
    case SortKey::kSymbol:
      break;
  }
  return f ? std::string(f->kernel() ? "[k] " : "[.] ") + frame_name(*f) : "[.] [no stack]";
}

struct Counts {
  uint64_t self = 0, total = 0;
  std::vector<CallChain> chains;  // -g: the stacks of the self samples
  // -g with --children, for the rows shown: the stacks through the row's
  // function below it, from its outermost frame there.
  std::vector<CallChain> callees;
};
using Rows = std::map<std::vector<std::string>, Counts>;

// What a row's key is made of: the sample's fields a column can show and
// the frame of interest. Rows are looked up by these first: building the
// key's strings for every frame of every stack was most of a report of
// 288k distinct stacks.
struct RowPart {
  uint32_t comm, pid, tid, cgroup;
  uint16_t cpu;
  ThreadState state;
  const Frame* frame;  // the profile's frames are the table's: stable
  bool operator==(const RowPart&) const = default;
};
struct RowPartHash {
  size_t operator()(const RowPart& r) const {
    size_t h = std::hash<const void*>{}(r.frame);
    for (uint64_t v : {uint64_t{r.comm}, uint64_t{r.pid}, uint64_t{r.tid}, uint64_t{r.cgroup},
                       uint64_t{r.cpu}, static_cast<uint64_t>(r.state)})
      h = hash_combine(h, v);
    return h;
  }
};

// The rows of a table, and the row of each sample field and frame.
class Table {
 public:
  Table(const Profile& p, const TopOptions& options)
      : p_(p),
        options_(options),
        per_frame_(std::any_of(options.sort.begin(), options.sort.end(), [](SortKey k) {
          return k == SortKey::kDso || k == SortKey::kSymbol;
        })) {}

  Counts* row_of(const ProfileStack& s, const Frame* f) {
    const RowPart part{s.key.comm, s.key.stack.pid, s.key.tid, s.key.cgroup,
                       s.key.cpu,  s.key.state,     f};
    auto [it, inserted] = by_part_.try_emplace(part, nullptr);
    if (inserted) {
      std::vector<std::string> key;
      for (SortKey k : options_.sort)
        key.push_back(value(k, p_, s, f));
      it->second = &rows_[std::move(key)];
    }
    return it->second;
  }

  bool per_frame() const { return per_frame_; }
  Rows& rows() { return rows_; }

 private:
  const Profile& p_;
  const TopOptions& options_;
  const bool per_frame_;
  Rows rows_;
  std::unordered_map<RowPart, Counts*, RowPartHash> by_part_;  // into rows_: map nodes stay put
};

// Self: the row of the stack's leaf. Children: every row a frame of the
// stack falls in, once per stack (a recursive function is not counted twice).
uint64_t count_rows(const Profile& p, const TopOptions& options, Table& table) {
  const bool per_frame = table.per_frame();
  auto row_of = [&](const ProfileStack& s, const Frame* f) { return table.row_of(s, f); };
  uint64_t total = 0;
  std::vector<Counts*> seen;
  for (const ProfileStack& s : p.stacks) {
    const uint64_t n = s.values.count;
    total += n;
    const Frame* leaf = s.frames.empty() ? nullptr : &s.frames[0];
    Counts* self = row_of(s, leaf);
    self->self += n;
    if (options.call_graph.mode != CallGraphMode::kNone && leaf)
      self->chains.push_back({&s, n});
    seen.clear();
    if (!per_frame || s.frames.empty())
      seen.push_back(row_of(s, leaf));
    else
      for (const Frame& f : s.frames)
        seen.push_back(row_of(s, &f));
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (Counts* row : seen)
      row->total += n;
  }
  return total;
}

using Row = Rows::value_type;

// The rows shown, in order: by self, or with --children by children.
std::vector<Row*> shown_rows(Rows& rows, const TopOptions& options, uint64_t total) {
  std::vector<Row*> sorted;
  for (Row& row : rows)
    sorted.push_back(&row);
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Row* a, const Row* b) {
    return options.children ? a->second.total > b->second.total : a->second.self > b->second.self;
  });
  // Rows with no self time only matter when sorting by children.
  if (!options.children)
    std::erase_if(sorted, [](const Row* r) { return r->second.self == 0; });
  // --percent-limit: what sorts the rows, as a share of the total.
  if (options.percent_limit > 0 && total > 0)
    std::erase_if(sorted, [&](const Row* r) {
      return 100.0 * double(options.children ? r->second.total : r->second.self) / double(total) <
             options.percent_limit;
    });
  if (options.rows && sorted.size() > options.rows)
    sorted.resize(options.rows);
  return sorted;
}

// perf's call graph under a --children row: what the row's function
// called, the samples through it below its outermost frame in each stack.
// Gathered for the rows shown only: for every row, every stack's frames
// would be millions of chains.
void gather_callees(const Profile& p, Table& table, std::span<Row* const> shown) {
  std::unordered_set<const Counts*> wanted;
  for (const Row* row : shown)
    wanted.insert(&row->second);
  std::unordered_set<const Counts*> seen;
  for (const ProfileStack& s : p.stacks) {
    seen.clear();
    for (size_t i = s.frames.size(); i-- > 1;) {
      Counts* row = table.row_of(s, &s.frames[i]);
      if (wanted.contains(row) && seen.insert(row).second)
        row->callees.push_back({&s, s.values.count, i});
    }
  }
}

void write_rows(std::ostream& out, const Profile& p, const TopOptions& options,
                std::span<Row* const> sorted, uint64_t total) {
  const bool time = p.unit == Unit::kMicroseconds;
  const bool children = options.children_column;
  std::string titles = std::string(children ? "# Children      Self" : "#     Self") +
                       (time                      ? "   Time ms"
                        : p.unit == Unit::kEvents ? "    Events"
                                                  : "   Samples");
  std::string dots = children ? "# ........  ........  ........" : "# ........  ........";
  for (SortKey k : options.sort) {
    const Column& c = column(k);
    titles += string_printf("  %-*s", c.width, c.title);
    dots += "  " + std::string(c.width ? c.width : 6, '.');
  }
  out << "#\n" << titles << "\n" << dots << "\n";
  for (const Row* row : sorted) {
    const auto& [key, counts] = *row;
    if (children)
      out << string_printf("  %7.2f%%", total ? 100.0 * counts.total / total : 0);
    out << string_printf("  %7.2f%%  ", total ? 100.0 * counts.self / total : 0)
        << (time ? string_printf("%8.1f", counts.self / 1000.0)
                 : string_printf("%8" PRIu64, counts.self));
    // Values are streamed: demangled C++ names can be kilobytes long.
    for (size_t i = 0; i < key.size(); ++i) {
      const Column& c = column(options.sort[i]);
      out << "  " << key[i];
      if (c.width && static_cast<int>(key[i].size()) < c.width)
        out << std::string(c.width - key[i].size(), ' ');
    }
    out << '\n';
    write_call_graph(out, counts.chains, total, options.call_graph);
    write_callee_graph(out, counts.callees, total, options.call_graph);
  }
}

}  // namespace

std::vector<SortKey> parse_sort_keys(const std::string& list) {
  std::vector<SortKey> keys;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, comma - start);
    if (name == "sym")
      name = "symbol";  // perf's name for it
    auto c = std::find_if(std::begin(kColumns), std::end(kColumns),
                          [&](const Column& col) { return name == col.name; });
    if (c == std::end(kColumns))
      throw Error("--sort " + name +
                  ": unknown key; use comm, pid, tid, cpu, cgroup, dso, state, symbol (or sym)");
    if (std::find(keys.begin(), keys.end(), c->key) == keys.end())
      keys.push_back(c->key);
    start = comma + 1;
  }
  // Like perf, the symbol comes last, where its width does not matter.
  std::stable_partition(keys.begin(), keys.end(), [](SortKey k) { return k != SortKey::kSymbol; });
  return keys;
}

bool sorts_by_thread(const std::vector<SortKey>& keys) {
  return std::any_of(keys.begin(), keys.end(),
                     [](SortKey k) { return k == SortKey::kTid || k == SortKey::kCpu; });
}

bool sorts_by_cgroup(const std::vector<SortKey>& keys) {
  return std::find(keys.begin(), keys.end(), SortKey::kCgroup) != keys.end();
}

void write_top(std::ostream& out, const Profile& profile, const TopOptions& options) {
  Table table(profile, options);
  const uint64_t total = count_rows(profile, options, table);
  write_header(out, profile, total, options.following);
  const std::vector<Row*> shown = shown_rows(table.rows(), options, total);
  if (options.children && options.call_graph.mode != CallGraphMode::kNone && table.per_frame())
    gather_callees(profile, table, shown);
  write_rows(out, profile, options, shown, total);
  if (total != 0) {
    out << "#\n# unnamed frames: "
        << describe_unnamed(unnamed_by_reason(profile.stacks), total, unit_name(profile.unit))
        << "\n";
    return;
  }
  // Where the time is in the recording, if this view shows none of it.
  const RecordingSummary& s = profile.summary;
  if (s.recorded_samples == 0 && s.unviewed_intervals)
    out << "# no samples on CPU; the recording holds "
        << count_of(s.unviewed_intervals, "interval", "intervals")
        << " off CPU: --view offcpu (or wall) shows them\n";
  else if (s.recorded_samples == 0 && s.unviewed_samples)
    out << "# no intervals off CPU; the recording holds "
        << count_of(s.unviewed_samples, "sample", "samples")
        << " on CPU: --view oncpu (or wall) shows them\n";
  else
    out << (s.recorded_samples ? "# no samples left after filtering\n"
                               : "# no samples: was the target idle, or did it exit at once?\n");
}

}  // namespace ebprof::report
