// ebprof-record: command line to RecordOptions, then one session.
#include <bpf/libbpf.h>

#include <CLI/CLI.hpp>
#include <cstdarg>
#include <cstdio>

#include "common/main_guard.h"
#include "record/options.h"
#include "record/session.h"

namespace {

int print_libbpf(libbpf_print_level, const char* format, va_list args) {
  return std::vfprintf(stderr, format, args);
}

int silence_libbpf(libbpf_print_level, const char*, va_list) {
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ebprof::record::RecordOptions o;
  o.argv.assign(argv, argv + argc);
  bool verbose = false, call_graph = false, no_compression = false;

  CLI::App app{
      "Sample kernel and user stacks with eBPF and stream them to a recording file.\n"
      "Without a target, samples all CPUs (like perf record -a).",
      "ebprof-record"};
  app.add_option("-o,--output", o.output,
                 "Recording file to write (an existing one is kept as FILE.old)")
      ->capture_default_str();
  app.add_option("-F,--freq", o.frequency, "Sampling frequency in Hz, per CPU")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_flag("-a,--all-cpus", o.all_cpus,
               "Sample every process on all CPUs, also while running a command");
  app.add_option("-p,--pid", o.pids, "Sample only these processes (comma-separated pids)")
      ->delimiter(',');
  app.add_option("--duration", o.duration_s, "Stop after this many seconds");
  app.add_flag("-g", call_graph, "Record call graphs (always on; accepted as perf does)");
  app.add_flag("--no-compression", no_compression, "Write frames without zstd compression");
  app.add_flag("-v,--verbose", verbose, "Print libbpf's log, including the verifier's");
  // Like perf: option parsing stops at the command, so its own options
  // (`ebprof-record ./server -p 8080`) stay its own.
  app.prefix_command();
  app.footer(
      "COMMAND [ARGS...] after the options (or after --) is launched and profiled;\n"
      "recording stops when it exits.");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ebprof-record: %s (see --help)\n", e.what());
    return 2;
  }
  o.command = app.remaining();
  if (!o.command.empty() && o.command[0] == "--") {
    o.command.erase(o.command.begin());
  } else if (!o.command.empty() && o.command[0].starts_with("-")) {
    std::fprintf(stderr, "ebprof-record: unknown option %s (see --help; put a command after --)\n",
                 o.command[0].c_str());
    return 2;
  }
  o.compress = !no_compression;
  libbpf_set_print(verbose ? print_libbpf : silence_libbpf);

  return ebprof::run_guarded("ebprof-record", [&] { ebprof::record::run_session(o); });
}
