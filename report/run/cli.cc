#include "report/run/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "common/version.h"
#include "report/run/formats.h"
#include "report/symbolize/inflated_cache.h"

namespace ebprof::report {
namespace {

std::string format_help() {
  std::string help;
  for (const FormatInfo& f : output_formats())
    help += std::string(help.empty() ? "" : "; ") + f.name + ": " + f.help;
  return help;
}

void add_output_options(CLI::App& app, ReportOptions& o) {
  app.add_option("-o,--output", o.output, "Write the report to this file (default: stdout)");
  app.add_flag("--stdio")->description(
      "Text output: the only interface there is (accepted for perf's habit)");
  app.add_option("--labels", o.labels,
                 "The labels of each pprof sample: any of pid, tid, comm, cpu, cgroup, or none "
                 "(fewer labels, fewer distinct samples for a backend's limits)")
      ->capture_default_str();
  app.add_flag("--follow", o.follow,
               "Read a recording still being written and redraw the top table every second, "
               "like perf top from the file, until its end frame comes (or Ctrl-C)");
  app.add_option("--split", o.split,
                 "With --format pprof and -o DIR: one profile per DURATION of wall-clock time "
                 "(60s, 5m, 1h; at least 1s), each stamped with its slice's time, as "
                 "continuous-profiling backends (Pyroscope, Parca) take them");
  app.add_option("--max-memory", o.max_memory,
                 "Stop with an error rather than take more memory than this, as 512M or 4G "
                 "(default: 3/4 of this machine's)")
      ->transform(CLI::AsSizeValue(false));
  std::vector<std::string> names;
  for (const FormatInfo& f : output_formats())
    names.push_back(f.name);
  app.add_option("--format", o.format, format_help())
      ->capture_default_str()
      ->check(CLI::IsMember(names));
  auto* top = app.add_option_group("top");
  top->add_option("-n,--rows", o.rows, "Rows in the top table (0: all)")->capture_default_str();
  top->add_option("-s,--sort", o.sort,
                  "Row keys: comm, pid, tid, cpu, cgroup, dso, state (on CPU, or why off it), "
                  "symbol")
      ->capture_default_str();
  auto* children = top->add_flag(
      "--children", o.children,
      "Order rows by children (samples anywhere on the stack), as perf's default does; "
      "ebprof's is self, where the time is spent, with both columns shown");
  top->add_flag("--no-children", o.no_children,
                "Order rows by self and leave the Children column out (as perf's)")
      ->excludes(children);
  top->add_option("--percent-limit", o.percent_limit,
                  "Leave out rows below this percentage (of self, or of children with "
                  "--children)")
      ->check(CLI::Range(0.0, 100.0));
  auto* graph = top->add_option("-g,--call-graph", o.call_graph,
                                "Under each row, its call paths, in perf's grammar "
                                "TYPE,MIN[,PRINT_LIMIT],ORDER[,KEY]: TYPE graph (the default), "
                                "flat, folded or none (the flat table); MIN the least share "
                                "shown (0.5); ORDER callee (a tree of callers, nearest first: "
                                "the default) or caller (from the outermost in); as -g caller, "
                                "-g none, -g graph,0.5,caller")
                    ->expected(0, 1);
  top->add_flag("-G,--inverted", o.inverted, "The tree from the outermost caller in: -g caller")
      ->excludes(graph);
  auto* header = top->add_flag("--header", o.header, "What info says, then the report");
  top->add_flag("--header-only", o.header_only, "What info says, instead of the report")
      ->excludes(header);
  auto* folded = app.add_option_group("folded");
  folded
      ->add_option("--prefix", o.prefix,
                   "First frame of each stack: comm, pid, comm,pid (as comm-pid) or none")
      ->capture_default_str()
      ->check(CLI::IsMember({"comm", "pid", "comm,pid", "pid,comm", "none"})
                  .description("{comm | pid | comm,pid | pid,comm | none}"));
  folded->add_flag("--annotate", o.annotate,
                   "Mark kernel frames with _[k], inlined ones with _[i], JIT ones with _[j]");
  folded->add_flag("--delimit", o.delimit, "A '-' frame between the user and kernel halves");
}

void add_symbol_options(CLI::App& app, ReportOptions& o) {
  auto* symbols = app.add_option_group("symbols");
  symbols->add_option("--symfs", o.symfs,
                      "Look for binaries and debuginfo under this directory, like perf");
  symbols
      ->add_option("--debug-dir", o.debug_dirs,
                   "Directories of separate debuginfo (.build-id/ and debuglink paths)")
      ->capture_default_str();
  symbols
      ->add_option("--debuginfod-timeout", o.debuginfod_timeout_s,
                   "Seconds the debuginfod servers (DEBUGINFOD_URLS) get in all, for every "
                   "build-id of the report")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  o.cache_dir = default_cache_dir();
  symbols
      ->add_option("--cache-dir", o.cache_dir,
                   "Where compressed debuginfo is kept inflated, by build-id, for the next "
                   "reports (1 GB at most, the least recently used files go first)")
      ->capture_default_str();
  symbols->add_flag("--no-cache", o.no_cache, "Inflate compressed debuginfo afresh, keep nothing");
  symbols->add_flag("--lines", o.lines, "Append source file:line to names, where DWARF is found");
  symbols->add_flag("--no-demangle", o.no_demangle, "Keep C++ and Rust names as in the binary");
  symbols->add_flag("--no-inline", o.no_inline,
                    "Do not expand inlined functions into frames (no DWARF unless --lines)");
  symbols
      ->add_option("--unwind", o.unwind,
                   "User stacks of a --call-graph dwarf recording: dwarf (unwound from the "
                   "copied stacks) or fp (the frame-pointer chain recorded beside them)")
      ->capture_default_str()
      ->check(CLI::IsMember({"dwarf", "fp"}));
}

void add_filter_options(CLI::App& app, ReportOptions& o) {
  auto* f = app.add_option_group("filters");
  f->add_option("--pid,--pids", o.pids, "Only these processes")->delimiter(',');
  f->add_option("--tid,--tids", o.tids, "Only these threads")->delimiter(',');
  f->add_option("-c,--comm,--comms", o.comms, "Only these commands")->delimiter(',');
  f->add_option("-C,--cpu", o.cpus, "Only samples on these CPUs")->delimiter(',');
  f->add_option("--time", o.time,
                "Only samples in START,END: seconds from the start, absolute as script "
                "prints them, or a date and time (2026-12-01T10:00:00 local, ...Z for UTC); "
                "either side may be empty");
  f->add_flag("--include-idle", o.include_idle, "Count the idle task (pid 0) too");
  f->add_flag("--gil", o.gil,
              "Only samples of CPython threads holding their interpreter's GIL (as py-spy's "
              "--gil): where Python code ran, not where threads waited for it");
  f->add_flag("--wakers", o.wakers,
              "Show who woke each blocked thread (recorded with --wakers): its stack above a "
              "'--' frame, its comm last, like offwaketime");
  f->add_option("--view", o.view,
                "oncpu: samples on CPU (the default); offcpu: intervals off CPU (recorded with "
                "--off-cpu; the default for --off-cpu-only); wall: both, the whole life of "
                "each thread")
      ->check(CLI::IsMember({"oncpu", "offcpu", "wall"}));
  f->add_option("--weight", o.weight,
                "samples, or time (a sample's period, an interval's length, in microseconds); "
                "auto: time when intervals off CPU are shown, else events (the samples' "
                "periods, as perf weighs) for an event other than a clock")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "samples", "time"}));
  auto* kernel_only = f->add_flag("--kernel-only", o.kernel_only, "Only the kernel half of stacks");
  f->add_flag("--user-only", o.user_only, "Only the user half of stacks")->excludes(kernel_only);
  f->add_option("-d,--dso,--dsos", o.dsos, "Only stacks through these shared objects")
      ->delimiter(',');
  f->add_option("-S,--symbol,--symbols", o.symbol,
                "Only stacks through a function matching this regular expression");
  f->add_option("--max-stack", o.max_stack,
                "Keep at most this many frames of each stack, from the leaf (as perf's)");
}

// perf's -g takes the next argument when it is one (-g caller, -g
// graph,0.5); before a subcommand or a recording, -g stands alone, as the
// flag it was: the default graph. CLI11 takes an optional value whatever
// it is, so the arguments are put to it as --call-graph=VALUE, or without
// the -g. Reversed, as CLI11's vector parse takes them.
std::vector<std::string> perf_call_graph_args(int argc, char** argv,
                                              const std::vector<std::string>& commands) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "-g")
      continue;
    const bool value = i + 1 < args.size() && !args[i + 1].starts_with('-') &&
                       std::find(commands.begin(), commands.end(), args[i + 1]) == commands.end() &&
                       !std::filesystem::exists(args[i + 1]);
    if (value) {
      args[i] = "--call-graph=" + args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    } else {
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i--));
    }
  }
  std::reverse(args.begin(), args.end());
  return args;
}

struct Subcommands {
  CLI::App* info;
  CLI::App* dump;
  CLI::App* diff;
  CLI::App* merge;
  CLI::App* script;
};

Subcommands add_subcommands(CLI::App& app, ReportOptions& o) {
  Subcommands s{
      app.add_subcommand("info",
                         "Describe the recording: header, counts, losses, embedded "
                         "symbols, bytes per section"),
      app.add_subcommand("dump", "Print every frame of the recording as text"),
      app.add_subcommand("diff",
                         "Compare two recordings: BASE NEW, in the --format given (top, folded, "
                         "pprof, flamegraph, svg); -n, --sort, --children and every filter "
                         "(--pid, --comm, --time, --dso, --symbol, ...) apply to both"),
      app.add_subcommand("merge",
                         "Write several recordings into one file (-o) that every "
                         "report command reads"),
      app.add_subcommand("script",
                         "Every sample with its stack, as perf script prints them (the same "
                         "as --format script)")};
  for (CLI::App* sub : {s.info, s.dump, s.diff, s.merge, s.script})
    sub->fallthrough();  // the report's options given after the subcommand still count
  for (CLI::App* sub : {s.info, s.dump, s.script})
    sub->add_option("file", o.files, "Recordings to read (same as -i)");
  s.diff
      ->add_option("recordings", o.files,
                   "BASE NEW; as perf diff, one recording is NEW, and BASE is then "
                   "ebprof.data.old (where ebprof-record moves the last recording); none: "
                   "ebprof.data.old ebprof.data")
      ->expected(0, 2);
  s.diff
      ->add_option("--normalize", o.normalize,
                   "What a sample counts for: none, total (a share of its own recording), "
                   "per-second or per-cpu-second")
      ->capture_default_str();
  s.diff
      ->add_option("--join", o.join,
                   "Match frames by symbol name (a rebuild still matches) or by build-id and "
                   "address")
      ->capture_default_str();
  s.merge->add_option("recordings", o.files, "Recordings to merge, in order")
      ->required()
      ->expected(1, -1);
  app.require_subcommand(0, 1);
  return s;
}

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, ReportOptions& o) {
  CLI::App app{"Symbolize an ebprof recording and report where the time went.", "ebprof-report"};
  app.set_version_flag("--version", version_line("ebprof-report"));
  // One file each time, as perf's -i: `-i a.data script` reads a.data.
  auto* input = app.add_option("-i,--input", o.inputs,
                               "Recording to read, a directory of them or a quoted pattern "
                               "('host.data.*', in name order); repeat it to report on several "
                               "as one")
                    ->capture_default_str()
                    ->allow_extra_args(false);
  add_output_options(app, o);
  add_symbol_options(app, o);
  add_filter_options(app, o);
  const Subcommands sub = add_subcommands(app, o);
  app.footer(
      "Examples:\n"
      "  ebprof-report                                   top functions of ./ebprof.data\n"
      "  ebprof-report -i run.data --children -n 40      by samples anywhere on the stack\n"
      "  ebprof-report --format folded > out.folded      for flamegraph.pl, speedscope\n"
      "  ebprof-report --format flamegraph -o fg.html    an interactive page, no network\n"
      "  ebprof-report --format pprof -o cpu.pb.gz       then: go tool pprof -top cpu.pb.gz\n"
      "  ebprof-report script | stackcollapse-perf.pl    every sample, as perf script\n"
      "  ebprof-report --comm nginx --time 10,20         one command, seconds 10 to 20\n"
      "  ebprof-report diff before.data after.data       what changed, per function\n"
      "  ebprof-report info run.data                     what the recording holds");
  try {
    std::vector<std::string> args =
        perf_call_graph_args(argc, argv, {"info", "dump", "diff", "merge", "script"});
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ebprof-report: %s (see --help)\n", e.what());
    return 2;
  }
  o.inputs_given = input->count() > 0;
  o.command = sub.info->parsed()    ? Command::kInfo
              : sub.dump->parsed()  ? Command::kDump
              : sub.diff->parsed()  ? Command::kDiff
              : sub.merge->parsed() ? Command::kMerge
                                    : Command::kReport;
  if (sub.script->parsed())
    o.format = "script";
  // As perf diff: one recording is the new one, against ebprof.data.old.
  if (o.command == Command::kDiff && o.files.size() < 2) {
    o.files.insert(o.files.begin(), "ebprof.data.old");
    if (o.files.size() < 2)
      o.files.push_back("ebprof.data");
  }
  return std::nullopt;
}

}  // namespace ebprof::report
