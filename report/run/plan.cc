#include "report/run/plan.h"

#include <glob.h>

#include <algorithm>
#include <filesystem>

#include "common/error.h"
#include "common/text.h"
#include "format/reader.h"
#include "report/load/summary.h"
#include "report/run/memory_budget.h"

namespace ebprof::report {
namespace {

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

Weight parse_weight(const std::string& name) {
  if (name == "samples")
    return Weight::kSamples;
  if (name == "time")
    return Weight::kTime;
  if (name == "auto")
    return Weight::kAuto;
  throw Error("--weight " + name + ": use auto, samples or time");
}

UnwindMode parse_unwind(const std::string& name) {
  if (name == "dwarf")
    return UnwindMode::kDwarf;
  if (name == "fp")
    return UnwindMode::kFramePointer;
  throw Error("--unwind " + name + ": use dwarf or fp");
}

// The recordings in `dir`, by name: for the files of --switch-output
// (FILE.<UTC time>), time order.
std::vector<std::string> recordings_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec))
      continue;
    try {
      format::read_version(entry.path().string());
      out.push_back(entry.path().string());
    } catch (const Error&) {
      // not a recording: a directory of them may hold other files
    }
  }
  if (ec)
    throw Error(ec.message() + " reading the directory " + dir + ": give a readable one");
  if (out.empty())
    throw Error(dir + " holds no ebprof recording: give a recording, or a directory of them");
  std::sort(out.begin(), out.end());
  return out;
}

// Each input as given, a directory as the recordings in it, a pattern that
// names no file (-i 'perf.data.*', quoted) as the files it matches, by name.
std::vector<std::string> expand_inputs(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const std::string& in : given) {
    std::error_code ec;
    if (std::filesystem::is_directory(in, ec)) {
      std::vector<std::string> found = recordings_in(in);
      out.insert(out.end(), found.begin(), found.end());
      continue;
    }
    if (in.find_first_of("*?[") == std::string::npos || std::filesystem::exists(in, ec)) {
      out.push_back(in);
      continue;
    }
    glob_t matches{};
    const int rc = glob(in.c_str(), 0, nullptr, &matches);
    if (rc == 0)
      out.insert(out.end(), matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
    globfree(&matches);
    if (rc != 0)
      throw Error(in + ": no file matches: check the pattern (quote it for ebprof-report)");
  }
  return out;
}

// --labels: pid, tid, comm, cpu, cgroup, comma-separated, or none.
PprofLabels parse_labels(const std::string& text) {
  PprofLabels l{false, false, false, false, false};
  if (text == "none")
    return l;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string name = text.substr(at, comma - at);
    bool* flag = name == "pid"      ? &l.pid
                 : name == "tid"    ? &l.tid
                 : name == "comm"   ? &l.comm
                 : name == "cpu"    ? &l.cpu
                 : name == "cgroup" ? &l.cgroup
                                    : nullptr;
    if (!flag)
      throw Error("--labels " + text + ": " + name +
                  " is no label; give pid, tid, comm, cpu or cgroup, comma-separated, or none");
    *flag = true;
    at = comma + 1;
  }
  return l;
}

// --split's DURATION: 60s, 5m, 1h, 1d or seconds alone; at least a second
// (slices are numbered in seconds since 1970 over their length).
uint64_t parse_split(const ReportOptions& o, const FormatInfo& format) {
  if (o.split.empty())
    return 0;
  const std::string usage = "--split " + o.split + ": ";
  const bool seconds = o.split.find_first_not_of("0123456789") == std::string::npos;
  const std::optional<uint64_t> ns = parse_duration_ns(seconds ? o.split + "s" : o.split);
  constexpr uint64_t kYear = 366 * 86400 * uint64_t{1'000'000'000};
  if (!ns || *ns > kYear)
    throw Error(usage + "expected a duration of at least 1s, as 60s, 5m or 1h");
  if (o.command != Command::kReport || !format.slice_extension)
    throw Error(usage + "splits pprof output: add --format pprof");
  if (o.output.empty())
    throw Error(usage + "writes one file per slice: give the directory with -o DIR");
  return *ns;
}

std::vector<std::string> inputs_of(const ReportOptions& o) {
  switch (o.command) {
    case Command::kDiff:
      if (o.inputs_given)
        throw Error("diff reads the two recordings it is given (BASE NEW), not -i");
      return o.files;
    case Command::kMerge:
      if (o.output.empty())
        throw Error("merge needs -o FILE: where to write the merged recording");
      return expand_inputs(o.files);
    case Command::kInfo:
    case Command::kDump:
    case Command::kReport: {  // `script FILE`
      // FILEs add to -i's, which then has no default.
      std::vector<std::string> inputs =
          o.inputs_given || o.files.empty() ? o.inputs : std::vector<std::string>{};
      inputs.insert(inputs.end(), o.files.begin(), o.files.end());
      return expand_inputs(inputs);
    }
  }
  return o.inputs;
}

SampleFilter sample_filter(const ReportOptions& o) {
  // info counts everything in the file: samples on CPU and intervals off it.
  if (o.command == Command::kInfo)
    return SampleFilter{.include_idle = true, .view = View::kWall};
  SampleFilter f{o.pids, o.tids, o.cpus, o.comms};
  f.include_idle = o.include_idle;
  f.gil_only = o.gil;
  if (!o.view.empty())
    f.view = parse_view(o.view);
  if (!o.time.empty())
    parse_time_window(o.time, f);
  return f;
}

StackFilter stack_filter(const ReportOptions& o) {
  StackFilter f{o.kernel_only, o.user_only, o.dsos};
  f.max_stack = o.max_stack;
  if (!o.symbol.empty()) {
    try {
      f.symbol = std::regex(o.symbol);
    } catch (const std::regex_error& e) {
      throw Error("--symbol " + o.symbol + ": not a regular expression (" + e.what() + ")");
    }
  }
  return f;
}

SymbolizeOptions symbolize_options(const ReportOptions& o) {
  SymbolizeOptions s;
  s.sources = {o.symfs, o.debug_dirs};
  s.demangle = !o.no_demangle;
  s.inline_frames = !o.no_inline;
  s.lines = o.lines;
  s.cache_dir = o.no_cache ? "" : o.cache_dir;
  return s;
}

}  // namespace

Plan make_plan(const ReportOptions& given) {
  ReportOptions o = given;
  if (o.header_only && o.command == Command::kReport)
    o.command = Command::kInfo;  // perf's --header-only is what info shows
  Plan plan;
  plan.command = o.command;
  plan.header = o.header;
  plan.format = find_format(o.format);
  if (!plan.format)
    throw Error("--format " + o.format + ": no such format (see --help)");
  if (o.command == Command::kDiff && !plan.format->write_diff)
    throw Error(std::string("diff writes top, folded, pprof, flamegraph or svg: --format ") +
                plan.format->name + " shows one recording's samples");
  plan.inputs = inputs_of(o);
  plan.output = o.output;
  plan.max_memory = o.max_memory ? o.max_memory : default_memory_budget();
  plan.samples = sample_filter(o);
  plan.split_ns = parse_split(o, *plan.format);
  plan.sink = plan.split_ns ? Sink::kDirectory : o.output.empty() ? Sink::kStdout : Sink::kFile;
  plan.follow = o.follow;
  plan.pprof_labels = parse_labels(o.labels);
  if (o.follow && (o.command != Command::kReport || !plan.format->redraws || !o.output.empty()))
    throw Error(
        "--follow redraws the top table on the terminal: leave out --format, -o and "
        "the command");
  plan.samples.split_ns = plan.split_ns;
  plan.stacks = stack_filter(o);
  plan.symbols = symbolize_options(o);
  plan.debuginfod_timeout_s = o.debuginfod_timeout_s;
  plan.weight = parse_weight(o.weight);
  plan.normalize = parse_normalize(o.normalize);
  plan.join = parse_join(o.join);
  const std::string call_graph = o.inverted ? "caller" : o.call_graph;
  if (!call_graph.empty() && o.command == Command::kReport && !plan.format->call_tree)
    throw Error("-g " + call_graph + ": --format " + plan.format->name +
                " draws no call paths under rows (the top table does): leave it out");
  plan.top = {o.rows, parse_sort_keys(o.sort), o.children, o.percent_limit,
              // As perf report: the call graph is drawn unless asked not to.
              parse_call_graph(call_graph), !o.no_children};
  plan.folded = {.comm = o.prefix.find("comm") != std::string::npos,
                 .pid = o.prefix.find("pid") != std::string::npos,
                 .annotate = o.annotate,
                 .delimit = o.delimit};
  // Threads, CPUs and cgroups apart only where the output shows them (a
  // pprof label, a column of the top table): merged, the same stack of
  // many threads is symbolized and written once.
  const bool pprof_threads = plan.pprof_labels.tid || plan.pprof_labels.cpu;
  const auto shown = [&](bool as_label, bool as_column) {
    return (plan.format->shows_keys == ShowsKeys::kAsLabels && as_label) ||
           (plan.format->shows_keys == ShowsKeys::kAsColumns && o.command == Command::kReport &&
            as_column);
  };
  plan.grouping = {.threads = shown(pprof_threads, sorts_by_thread(plan.top.sort)),
                   .cgroups = shown(plan.pprof_labels.cgroup, sorts_by_cgroup(plan.top.sort)),
                   .wakers = o.wakers};
  plan.unwind = parse_unwind(o.unwind);
  return plan;
}

Unit unit_for(const Plan& plan, std::span<const std::span<const Recording>> sides) {
  if (!plan.format->weighs_time || plan.weight == Weight::kSamples)
    return Unit::kSamples;
  bool time = plan.weight == Weight::kTime;
  for (std::span<const Recording> side : sides)
    for (const Recording& r : side)
      for (const auto& [key, values] : r.counts)
        time |= key.state != ThreadState::kOnCpu;
  if (!time) {
    // perf weighs a sample by its period: at -F the kernel adapts it to
    // the event's rate, so a burst of page faults is few samples of many
    // events each. A clock's period is fixed: samples say the same.
    for (std::span<const Recording> side : sides)
      for (const Recording& r : side)
        if (r.sample_periods && !is_clock_event(r.info.event))
          return Unit::kEvents;
    return Unit::kSamples;
  }
  // A sample of cycles or of a tracepoint is an event, not a length of time.
  for (std::span<const Recording> side : sides)
    for (const Recording& r : side)
      for (const auto& [key, values] : r.counts)
        if (key.state == ThreadState::kOnCpu && !is_clock_event(r.info.event))
          throw Error("--weight time: samples of " + r.info.event +
                      " are events, not time; use --view offcpu, or --weight samples");
  return Unit::kMicroseconds;
}

void check_view(const Plan& plan, std::span<const Recording> recordings) {
  const std::optional<View>& view = plan.samples.view;
  auto any = [&](auto pred) { return std::any_of(recordings.begin(), recordings.end(), pred); };
  if (view && *view != View::kOnCpu &&
      !any([](const Recording& r) { return !r.info.off_cpu.empty(); }))
    throw Error("--view: the recording holds no time off CPU; record with --off-cpu");
  if (view && *view == View::kOnCpu && !any([](const Recording& r) { return r.info.sampling; }))
    throw Error(
        "--view oncpu: the recording was made with --off-cpu-only, without samples; use --view "
        "offcpu");
}

}  // namespace ebprof::report
