// ebprof-report: reads a recording anywhere and writes a report.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>

#include "common/error.h"
#include "common/main_guard.h"
#include "report/debuginfod.h"
#include "report/dump_writer.h"
#include "report/folded_writer.h"
#include "report/info_writer.h"
#include "report/pprof_writer.h"
#include "report/profile.h"
#include "report/sample_filter.h"
#include "report/script_writer.h"
#include "report/stack_filter.h"
#include "report/symbolizer.h"
#include "report/top_writer.h"

namespace {

using namespace ebprof::report;

Profile load(const std::string& input, const SampleFilter* filter) {
  Profile profile = load_profile(input, filter);
  if (!profile.warning.empty())
    std::fprintf(stderr, "ebprof-report: warning: %s\n", profile.warning.c_str());
  return profile;
}

}  // namespace

int main(int argc, char** argv) {
  std::string input = "ebprof.data";
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
  symbols.warn = [](const std::string& message) {
    std::fprintf(stderr, "ebprof-report: warning: %s\n", message.c_str());
  };

  CLI::App app{"Symbolize an ebprof recording and report where the time went.", "ebprof-report"};
  app.add_option("-i,--input", input, "Recording to read")->capture_default_str();
  app.add_option("-o,--output", output, "Write the report to this file (default: stdout)");
  app.add_option("--format", format,
                 "top: self and children per function, like perf report; folded: flamegraph.pl "
                 "input; script: every sample, like perf script; pprof: gzipped profile.proto "
                 "for go tool pprof (use -o)")
      ->capture_default_str()
      ->check(CLI::IsMember({"top", "folded", "script", "pprof"}));

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
  top_group->add_option("-s,--sort", sort, "Row keys: comm, pid, tid, cpu, dso, symbol")
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
  for (auto* sub : {info, dump}) {
    sub->fallthrough();  // -i given after the subcommand still counts
    sub->add_option("file", input, "Recording to read (same as -i)");
  }
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
    std::ofstream file;
    struct stat in {
    }, out_st{};
    // -o with the input's name (-i defaults to ebprof.data) would truncate
    // the recording before reading it.
    if (!output.empty() && stat(input.c_str(), &in) == 0 && stat(output.c_str(), &out_st) == 0 &&
        in.st_dev == out_st.st_dev && in.st_ino == out_st.st_ino)
      throw ebprof::Error("-o " + output + " is the recording being read: choose another file");
    if (!output.empty()) {
      file.open(output, std::ios::binary | std::ios::trunc);
      if (!file)
        throw ebprof::Error(ebprof::errno_message("cannot write " + output, errno) +
                            ": choose another path with -o");
    }
    std::ostream& out = output.empty() ? std::cout : file;
    std::ios::sync_with_stdio(false);

    if (dump->parsed()) {
      write_dump(out, input);
    } else if (info->parsed()) {
      Profile profile = load(input, nullptr);
      write_info(out, input, profile, unnamed_by_reason(symbolize(profile, symbols, false)));
    } else if (format == "script") {
      write_script(out, input, load(input, nullptr), samples, stacks, symbols);
    } else {
      Profile profile = load(input, &samples);
      const bool per_thread =
          format == "pprof" || std::any_of(top.sort.begin(), top.sort.end(), [&](const auto& k) {
            return format == "top" && (k == "tid" || k == "cpu");
          });
      std::vector<SymbolizedStack> symbolized = symbolize(profile, symbols, per_thread);
      filter_stacks(stacks, symbolized);
      if (format == "folded")
        write_folded(out, symbolized, folded);
      else if (format == "pprof")
        write_pprof(out, profile, symbolized);
      else
        write_top(out, profile, symbolized, top);
    }
    out.flush();
    if (!out)
      throw ebprof::Error("cannot write " + (output.empty() ? std::string("the report") : output) +
                          ": the disk is full or the output was closed");
  });
}
