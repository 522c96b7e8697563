// ebprof-report: reads a recording anywhere and writes a report.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>

#include "common/error.h"
#include "common/main_guard.h"
#include "report/debuginfod.h"
#include "report/diff.h"
#include "report/dump_writer.h"
#include "report/flamegraph_writer.h"
#include "report/folded_writer.h"
#include "report/info_writer.h"
#include "report/merge.h"
#include "report/pprof_writer.h"
#include "report/profile.h"
#include "report/sample_filter.h"
#include "report/script_writer.h"
#include "report/stack_filter.h"
#include "report/symbolizer.h"
#include "report/text.h"
#include "report/top_writer.h"

namespace {

using namespace ebprof::report;

void warn(const std::string& message) {
  std::fprintf(stderr, "ebprof-report: warning: %s\n", message.c_str());
}

// Every source of every input, in order: several -i, a merged file.
std::vector<Profile> load_all(const std::vector<std::string>& inputs, const SampleFilter* filter) {
  std::vector<Profile> all;
  for (const std::string& input : inputs)
    for (Profile& p : load_profiles(input, filter)) {
      if (!p.warning.empty())
        warn(p.warning);
      all.push_back(std::move(p));
    }
  share_embedded_symbols(all);
  // Added up as equals, samples of other events or rates would mislead.
  for (const Profile& p : all)
    if (p.info.event != all.front().info.event ||
        describe_rate(p.info) != describe_rate(all.front().info)) {
      warn(p.path + " samples " + p.info.event + " " + describe_rate(p.info) + ", " +
           all.front().path + " " + all.front().info.event + " " + describe_rate(all.front().info) +
           ": their samples are counted as equals");
      break;
    }
  return all;
}

// The stacks of all `profiles`, each symbolized with its own tables, as one
// list; the stack filter applied.
std::vector<SymbolizedStack> symbolize_all(const std::vector<Profile>& profiles,
                                           const SymbolizeOptions& symbols, bool per_thread,
                                           const StackFilter& stacks, bool time) {
  std::vector<SymbolizedStack> all = symbolize(profiles, symbols, per_thread);
  filter_stacks(stacks, all);
  // --weight time: what each stack stands for, in microseconds, becomes its count.
  if (time)
    for (SymbolizedStack& s : all)
      s.count = (s.time_ns + 500) / 1000;
  return all;
}

// A --view of what was never recorded would be an empty report: say why.
void check_view(const std::vector<Profile>& profiles, std::optional<View> view) {
  auto any = [&](auto pred) { return std::any_of(profiles.begin(), profiles.end(), pred); };
  if (view && *view != View::kOnCpu &&
      !any([](const Profile& p) { return !p.info.off_cpu.empty(); }))
    throw ebprof::Error("--view: the recording holds no time off CPU; record with --off-cpu");
  if (view && *view == View::kOnCpu && !any([](const Profile& p) { return p.info.sampling; }))
    throw ebprof::Error(
        "--view oncpu: the recording was made with --off-cpu-only, without samples; use --view "
        "offcpu");
}

// --weight: "time" or "samples"; "auto" is time when intervals off CPU are
// in the view (counting them says little), else samples.
bool weigh_time(const std::string& weight, const std::vector<Profile>& profiles) {
  bool time = weight == "time";
  if (weight == "auto")
    for (const Profile& p : profiles)
      for (const StackCount& c : p.counts)
        time |= c.off_cpu != kOnCpu;
  // A sample of cycles or of a tracepoint is an event, not a length of time.
  if (time)
    for (const Profile& p : profiles)
      for (const StackCount& c : p.counts)
        if (c.off_cpu == kOnCpu && !is_clock_event(p.info.event))
          throw ebprof::Error("--weight time: samples of " + p.info.event +
                              " are events, not time; use --view offcpu, or --weight samples");
  return time;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

FlameOptions flame_options(const std::vector<Profile>& profiles, const std::string& unit) {
  const Profile& first = profiles.front();
  return {"Flame graph: " + first.info.event + " on " + first.info.hostname + ", " +
              utc_time(first.info.start_realtime_ns),
          false, unit};
}

// `ebprof-report diff BASE NEW`: both sides loaded and symbolized alike,
// joined, then written in `format`.
void write_diff(std::ostream& out, const std::string& format, const std::vector<Profile>& base,
                const std::vector<Profile>& now, Normalize normalize, Join join,
                const SymbolizeOptions& symbols, const StackFilter& stacks, int rows,
                const std::string& weight) {
  // Per thread only for pprof, whose samples carry tid and cpu labels.
  const bool per_thread = format == "pprof";
  const bool time = format != "pprof" && (weigh_time(weight, base) || weigh_time(weight, now));
  const std::vector<SymbolizedStack> base_stacks =
      symbolize_all(base, symbols, per_thread, stacks, time);
  const std::vector<SymbolizedStack> new_stacks =
      symbolize_all(now, symbols, per_thread, stacks, time);
  auto total = [](const std::vector<SymbolizedStack>& side) {
    uint64_t sum = 0;
    for (const SymbolizedStack& s : side)
      sum += s.count;
    return sum;
  };
  const std::string counted = time ? "us" : "samples";
  const DiffScale scale{sample_value(base, total(base_stacks), normalize),
                        sample_value(now, total(new_stacks), normalize)};
  const Profile base_summary = summary_of(base), new_summary = summary_of(now);
  if (format == "pprof") {
    write_pprof_diff(out, new_summary, base_stacks, scale.base_in_new_samples(), new_stacks);
    return;
  }
  const std::vector<DiffStack> joined = join_stacks(base_stacks, new_stacks, join);
  if (format == "folded") {
    write_diff_folded(out, joined, scale);
  } else if (format == "flamegraph" || format == "svg") {
    FlameOptions o{"Differential flame graph: " + base_summary.path + " -> " + new_summary.path,
                   true, value_unit(normalize, counted)};
    if (format == "svg")
      write_flamegraph_svg(out, flame_stacks(joined, scale), o);
    else
      write_flamegraph_html(out, flame_stacks(joined, scale), o);
  } else {  // top; main() refused script
    write_diff_top(out, base_summary, new_summary, joined, scale, normalize, rows, counted);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> inputs{"ebprof.data"};
  std::string output;
  std::string format = "top";
  std::string sort = "comm,dso,symbol";
  std::string time;
  std::string symbol;
  TopOptions top;
  FoldedOptions folded;
  SampleFilter samples;
  StackFilter stacks;
  SymbolizeOptions symbols;
  symbols.warn = warn;

  CLI::App app{"Symbolize an ebprof recording and report where the time went.", "ebprof-report"};
  auto* input_option = app.add_option("-i,--input", inputs,
                                      "Recording to read; repeat it to report on several as one")
                           ->capture_default_str();
  app.add_option("-o,--output", output, "Write the report to this file (default: stdout)");
  app.add_option("--format", format,
                 "top: self and children per function, like perf report; folded: flamegraph.pl "
                 "input; script: every sample, like perf script; pprof: gzipped profile.proto "
                 "for go tool pprof (use -o); flamegraph: one self-contained interactive HTML "
                 "page; svg: a static flame graph image")
      ->capture_default_str()
      ->check(CLI::IsMember({"top", "folded", "script", "pprof", "flamegraph", "svg"}));

  auto* symbol_group = app.add_option_group("symbols");
  symbol_group->add_option("--symfs", symbols.sources.symfs,
                           "Look for binaries and debuginfo under this directory, like perf");
  symbol_group
      ->add_option("--debug-dir", symbols.sources.debug_dirs,
                   "Directories of separate debuginfo (.build-id/ and debuglink paths)")
      ->capture_default_str();
  symbol_group->add_flag("--lines", symbols.lines,
                         "Append source file:line to names, where DWARF is found");
  bool no_demangle = false;
  symbol_group->add_flag("--no-demangle", no_demangle, "Keep C++ and Rust names as in the binary");
  bool no_inline = false;
  symbol_group->add_flag("--no-inline", no_inline,
                         "Do not expand inlined functions into frames (no DWARF unless --lines)");

  auto* top_group = app.add_option_group("top");
  top_group->add_option("-n,--rows", top.rows, "Rows in the top table (0: all)")
      ->capture_default_str();
  top_group
      ->add_option("-s,--sort", sort,
                   "Row keys: comm, pid, tid, cpu, dso, state (on CPU, or why off it), symbol")
      ->capture_default_str();
  top_group->add_flag("--children", top.children,
                      "Order rows by children (samples anywhere on the stack), not self");

  auto* folded_group = app.add_option_group("folded");
  std::string prefix = "comm";
  folded_group
      ->add_option("--prefix", prefix,
                   "First frame of each stack: comm, pid, comm,pid (as comm-pid) or none")
      ->capture_default_str()
      ->check(CLI::IsMember({"comm", "pid", "comm,pid", "pid,comm", "none"}));
  folded_group->add_flag("--annotate", folded.annotate, "Mark kernel frames with _[k]");
  folded_group->add_flag("--delimit", folded.delimit,
                         "A '-' frame between the user and kernel halves");

  auto* filters = app.add_option_group("filters");
  filters->add_option("--pid,--pids", samples.pids, "Only these processes")->delimiter(',');
  filters->add_option("--tid,--tids", samples.tids, "Only these threads")->delimiter(',');
  filters->add_option("--comm,--comms", samples.comms, "Only these commands")->delimiter(',');
  filters->add_option("-C,--cpu", samples.cpus, "Only samples on these CPUs")->delimiter(',');
  filters->add_option("--time", time,
                      "Only samples in START,END: seconds from the start, or absolute as script "
                      "prints them; either side may be empty");
  filters->add_flag("--include-idle", samples.include_idle, "Count the idle task (pid 0) too");
  std::string view, weight = "auto";
  filters->add_flag("--wakers", symbols.wakers,
                    "Show who woke each blocked thread (recorded with --wakers): its stack "
                    "above a '--' frame, its comm last, like offwaketime");
  filters->add_option("--view", view,
                      "oncpu: samples on CPU (the default); offcpu: intervals off CPU (recorded "
                      "with --off-cpu; the default for --off-cpu-only); wall: both, the whole "
                      "life of each thread");
  filters
      ->add_option("--weight", weight,
                   "samples, or time (a sample's period, an interval's length, in "
                   "microseconds); auto: time when intervals off CPU are shown")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "samples", "time"}));
  auto* kernel_only =
      filters->add_flag("--kernel-only", stacks.kernel_only, "Only the kernel half of stacks");
  filters->add_flag("--user-only", stacks.user_only, "Only the user half of stacks")
      ->excludes(kernel_only);
  filters->add_option("--dso,--dsos", stacks.dsos, "Only stacks through these shared objects")
      ->delimiter(',');
  filters->add_option("--symbol,--symbols", symbol,
                      "Only stacks through a function matching this regular expression");

  auto* info = app.add_subcommand(
      "info",
      "Describe the recording: header, counts, losses, embedded symbols, bytes per section");
  auto* dump = app.add_subcommand("dump", "Print every frame of the recording as text");
  std::vector<std::string> files;  // info's and dump's, added to -i's
  for (auto* sub : {info, dump}) {
    sub->fallthrough();  // -i given after the subcommand still counts
    sub->add_option("file", files, "Recordings to read (same as -i)");
  }
  std::vector<std::string> diff_inputs;
  std::string normalize = "total", join = "symbol";
  auto* diff = app.add_subcommand(
      "diff",
      "Compare two recordings: BASE NEW, in the --format given (top, folded, pprof, "
      "flamegraph, svg); the report's filters apply to both");
  diff->fallthrough();
  diff->add_option("recordings", diff_inputs, "BASE NEW")->required()->expected(2);
  diff->add_option("--normalize", normalize,
                   "What a sample counts for: none, total (a share of its own recording), "
                   "per-second or per-cpu-second")
      ->capture_default_str();
  diff->add_option("--join", join,
                   "Match frames by symbol name (a rebuild still matches) or by build-id and "
                   "address")
      ->capture_default_str();
  std::vector<std::string> merge_inputs;
  auto* merge = app.add_subcommand(
      "merge", "Write several recordings into one file (-o) that every report command reads");
  merge->fallthrough();
  merge->add_option("recordings", merge_inputs, "Recordings to merge, in order")
      ->required()
      ->expected(1, -1);
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ebprof-report: %s (see --help)\n", e.what());
    return 2;
  }
  symbols.demangle = !no_demangle;
  symbols.inline_frames = !no_inline;
  if (std::shared_ptr<Debuginfod> client = Debuginfod::from_environment(symbols.warn))
    symbols.debuginfod = [client](const std::string& build_id) {
      return client->find_debuginfo(build_id);
    };
  folded.comm = prefix.find("comm") != std::string::npos;
  folded.pid = prefix.find("pid") != std::string::npos;

  return ebprof::run_guarded("ebprof-report", [&] {
    if (!files.empty())
      inputs = input_option->count() ? inputs : std::vector<std::string>{};
    inputs.insert(inputs.end(), files.begin(), files.end());
    // Checked before anything is read or -o is truncated.
    const Normalize normalized = parse_normalize(normalize);
    const Join joined = parse_join(join);
    if (diff->parsed()) {
      if (format == "script")
        throw ebprof::Error(
            "diff writes top, folded, pprof, flamegraph or svg: --format script "
            "shows one recording's samples");
      if (input_option->count())
        throw ebprof::Error("diff reads the two recordings it is given (BASE NEW), not -i");
    }
    if (!view.empty())
      samples.view = parse_view(view);
    top.sort = parse_sort_keys(sort);
    if (!time.empty())
      parse_time_window(time, samples);
    if (!symbol.empty()) {
      try {
        stacks.symbol = std::regex(symbol);
      } catch (const std::regex_error& e) {
        throw ebprof::Error("--symbol " + symbol + ": not a regular expression (" + e.what() + ")");
      }
    }
    if (merge->parsed()) {
      if (output.empty())
        throw ebprof::Error("merge needs -o FILE: where to write the merged recording");
      for (const std::string& in : merge_inputs)
        if (same_file(in, output))
          throw ebprof::Error("-o " + output +
                              " is one of the recordings being merged: choose "
                              "another file");
      MergeResult r = merge_recordings(output, merge_inputs);
      for (const std::string& w : r.warnings)
        warn(w);
      std::fprintf(stderr,
                   "ebprof-report: merged %zu files (%llu recordings, %llu samples) into %s\n",
                   merge_inputs.size(), static_cast<unsigned long long>(r.sources),
                   static_cast<unsigned long long>(r.samples), output.c_str());
      return;
    }
    const std::vector<std::string>& read = diff->parsed() ? diff_inputs : inputs;
    // -o naming an input (-i defaults to ebprof.data) would truncate the
    // recording before reading it.
    for (const std::string& in : read)
      if (!output.empty() && same_file(in, output))
        throw ebprof::Error("-o " + output + " is the recording being read: choose another file");
    std::ofstream file;
    if (!output.empty()) {
      file.open(output, std::ios::binary | std::ios::trunc);
      if (!file)
        throw ebprof::Error(ebprof::errno_message("cannot write " + output, errno) +
                            ": choose another path with -o");
    }
    std::ostream& out = output.empty() ? std::cout : file;
    std::ios::sync_with_stdio(false);

    if (dump->parsed()) {
      for (const std::string& in : inputs)
        write_dump(out, in);
    } else if (info->parsed()) {
      // Everything in the file: samples on CPU and intervals off it.
      SampleFilter everything{.include_idle = true, .view = View::kWall};
      const std::vector<Profile> profiles = load_all(inputs, &everything);
      for (const Profile& p : profiles)
        write_info(out, p, unnamed_by_reason(symbolize(p, symbols, false)));
    } else if (diff->parsed()) {
      const std::vector<Profile> base = load_all({diff_inputs[0]}, &samples);
      const std::vector<Profile> now = load_all({diff_inputs[1]}, &samples);
      check_view(base, samples.view);
      check_view(now, samples.view);
      write_diff(out, format, base, now, normalized, joined, symbols, stacks, top.rows, weight);
    } else if (format == "script") {
      for (const std::string& in : inputs)
        write_script(out, in, load_all({in}, nullptr), samples, stacks, symbols);
    } else {
      const std::vector<Profile> profiles = load_all(inputs, &samples);
      check_view(profiles, samples.view);
      const bool per_thread =
          format == "pprof" || std::any_of(top.sort.begin(), top.sort.end(), [&](const auto& k) {
            return format == "top" && (k == "tid" || k == "cpu");
          });
      // pprof carries samples and time side by side: its counts stay samples.
      const bool by_time = format != "pprof" && weigh_time(weight, profiles);
      const std::vector<SymbolizedStack> symbolized =
          symbolize_all(profiles, symbols, per_thread, stacks, by_time);
      const Profile summary = summary_of(profiles);
      const FlameOptions flame = flame_options(profiles, by_time ? "us" : "samples");
      top.time = by_time;
      if (format == "folded")
        write_folded(out, symbolized, folded);
      else if (format == "pprof")
        write_pprof(out, summary, symbolized);
      else if (format == "flamegraph")
        write_flamegraph_html(out, flame_stacks(symbolized), flame);
      else if (format == "svg")
        write_flamegraph_svg(out, flame_stacks(symbolized), flame);
      else
        write_top(out, summary, symbolized, top);
    }
    out.flush();
    if (!out)
      throw ebprof::Error("cannot write " + (output.empty() ? std::string("the report") : output) +
                          ": the disk is full or the output was closed");
  });
}
