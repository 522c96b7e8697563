#include "record/cli.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "common/text.h"
#include "common/version.h"
#include "record/perf_events.h"

namespace ebprof::record {
namespace {

bool parse_compression(const std::string& value, ebprof::format::WriterOptions& out) {
  if (value == "none") {
    out.compress = false;
    return true;
  }
  out.compress = true;
  if (value == "zstd")
    return true;
  if (!value.starts_with("zstd:"))
    return false;
  const char* digits = value.c_str() + 5;
  char* end = nullptr;
  long level = std::strtol(digits, &end, 10);
  if (end == digits || *end != '\0' || level < 1 || level > 19)
    return false;
  out.zstd_level = static_cast<int>(level);
  return true;
}

// -F, -c, -e, the targets and the duration: what is sampled.
void add_sampling_options(CLI::App& app, RecordOptions& o) {
  auto* freq = app.add_option("-F,--freq", o.frequency,
                              "Sampling frequency in Hz, per CPU; max: the kernel's highest "
                              "(kernel.perf_event_max_sample_rate)")
                   ->capture_default_str()
                   ->transform([](std::string value) {
                     return value == "max" ? std::to_string(max_sample_rate()) : value;
                   })
                   ->check(CLI::Range(1, 100000))
                   ->each([&o](const std::string&) { o.frequency_given = true; });
  app.add_option("-c,--count", o.period, "Sample every COUNT events instead of -F")
      ->check(CLI::PositiveNumber)
      ->excludes(freq);
  app.add_option("-e,--event", o.event,
                 "Event to sample: cpu-clock, task-clock, page-faults, context-switches, ..., a "
                 "hardware event (cycles, instructions, ...) where a PMU exists, with :u or :k "
                 "for user or kernel mode only; or a stack on every hit of "
                 "tracepoint:CATEGORY:NAME, uprobe:PATH:SYMBOL or kprobe:SYMBOL")
      ->capture_default_str();
  app.add_flag("-a,--all-cpus", o.all_cpus,
               "Sample every process on all CPUs, also while running a command");
  app.add_option("-p,--pid", o.pids, "Sample only these processes (comma-separated pids)")
      ->delimiter(',');
  app.add_option("-t,--tid", o.tids, "Sample only these threads (comma-separated thread ids)")
      ->delimiter(',');
  app.add_option("-G,--cgroup", o.cgroup,
                 "Sample only tasks in this cgroup v2 and below it (a path, absolute or under "
                 "/sys/fs/cgroup)");
  app.add_option("-C,--cpu", o.cpu_list, "Sample only on these CPUs (e.g. 0-3,8)");
  app.add_option("--duration", o.duration_s, "Stop after this many seconds");
}

void add_off_cpu_options(CLI::App& app, RecordOptions& o) {
  auto* off_cpu =
      app.add_flag("--off-cpu", o.off_cpu,
                   "Also record where threads wait: each interval off CPU, with its length, "
                   "state and the stack the thread left with (like perf record --off-cpu)");
  app.add_flag("--off-cpu-only", o.off_cpu_only, "Record time off CPU only, no samples on CPU")
      ->excludes(off_cpu);
  app.add_option("--min-block", o.min_block_us,
                 "With --off-cpu: leave out intervals shorter than this many microseconds")
      ->capture_default_str();
  app.add_option("--max-block", o.max_block_us,
                 "With --off-cpu: leave out intervals longer than this many microseconds");
  app.add_option("--state", o.states,
                 "With --off-cpu: which states to record: R (preempted), S (sleeping), D "
                 "(uninterruptible), I (idle kernel thread), other, or all")
      ->capture_default_str();
  app.add_flag("--wakers", o.wakers,
               "With --off-cpu: also the stack of whoever woke each blocked thread (like "
               "offwaketime)");
  app.add_option("--off-cpu-hook", o.off_cpu_hook,
                 "With --off-cpu: how to see context switches: auto (the best this kernel "
                 "attaches), tp_btf, raw_tp or tracepoint")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "tp_btf", "raw_tp", "tracepoint"}));
  // Long names only: perf's -u and -k mean --uid and --clockid.
  auto* user_only = app.add_flag("--user-threads-only", o.user_threads_only,
                                 "With --off-cpu: user threads only (offcputime's -u)");
  app.add_flag("--kernel-threads-only", o.kernel_threads_only,
               "With --off-cpu: kernel threads only (offcputime's -k)")
      ->excludes(user_only);
}

// Where samples go and how: the file, the transport, compression, output.
struct OutputFlags {
  bool g = false;  // -g: frame pointers, as perf's
  std::string call_graph = "fp";
  std::string compression = "zstd";
  bool no_embed = false;
  bool no_python = false;
  std::string switch_output;  // "" when not given
  std::string flight_recorder, flight_recorder_size;
};

// perf's --call-graph syntax: fp, or dwarf with an optional stack size.
bool parse_call_graph(const std::string& value, RecordOptions& o) {
  if (value == "fp") {
    o.call_graph = format::CallGraph::kFramePointer;
    return true;
  }
  if (value != "dwarf" && !value.starts_with("dwarf,"))
    return false;
  o.call_graph = format::CallGraph::kDwarf;
  if (value == "dwarf")
    return true;
  const char* digits = value.c_str() + 6;
  char* end = nullptr;
  const unsigned long size = std::strtoul(digits, &end, 10);
  if (end == digits || *end != '\0' || size == 0 || size > format::kMaxUserStackBytes || size % 8)
    return false;
  o.user_stack_bytes = static_cast<uint32_t>(size);
  return true;
}

void add_output_options(CLI::App& app, RecordOptions& o, OutputFlags& flags) {
  app.add_option("-o,--output", o.output,
                 "Recording file to write (an existing one is kept as FILE.old)")
      ->capture_default_str();
  app.add_option("--transport", o.transport,
                 "How samples leave the kernel: auto (the BPF ring buffer where the kernel has "
                 "one), ringbuf or perfbuf")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "ringbuf", "perfbuf"}));
  app.add_option("-m,--mmap-pages", o.mmap_pages,
                 "Sample buffer size in pages per CPU, a power of two (default: a quarter of a "
                 "second of samples at -F)")
      ->check(CLI::PositiveNumber);
  auto* g = app.add_flag("-g", flags.g, "Frame-pointer call graphs (the default; as perf's -g)");
  app.add_option("--call-graph", flags.call_graph,
                 "fp: frame-pointer call graphs (the default); dwarf[,SIZE]: also SIZE bytes of "
                 "user stack (default 8192, at most 65528, a multiple of 8) and the registers "
                 "per sample, unwound offline: full stacks through code built without frame "
                 "pointers")
      ->capture_default_str()
      ->excludes(g);
  app.add_option("--compression", flags.compression,
                 "none, zstd or zstd:LEVEL (1-19; default zstd = level 3)")
      ->capture_default_str();
  app.add_flag("--no-embed-symbols", flags.no_embed,
               "Do not embed the symbol tables of sampled binaries (smaller file; the report then "
               "needs the binaries)");
  app.add_flag("--no-python", flags.no_python,
               "Do not read the frames of CPython 3.11 processes (read by default: their Python "
               "functions and lines then stand in their stacks, with the C code they call)");
  app.add_option(
         "--switch-output", flags.switch_output,
         "Move on to a new file, renaming the last FILE.<UTC time> as perf does: on "
         "SIGUSR2 (signal, the default), once it holds SIZE (100M; B, K, M or G) or "
         "once it is TIME old (60s; s, m, h or d); SIGUSR2 switches in every mode. Each file "
         "is a recording of its own")
      ->expected(0, 1);
  app.add_option("--flight-recorder", flags.flight_recorder,
                 "Keep only the last DURATION (60s, 5m, 1h) in memory, compressed, and write it "
                 "as one recording FILE.<UTC time> on SIGUSR2 and when recording stops, "
                 "recording on; a dump never holds what an earlier one does");
  app.add_option("--flight-recorder-size", flags.flight_recorder_size,
                 "The most --flight-recorder keeps in memory (default 256M; B, K, M or G); the "
                 "oldest goes first");
  app.add_option("--switch-max-files", o.switch_max_files,
                 "With --switch-output: keep only the newest N files, removing the oldest")
      ->check(CLI::PositiveNumber);
  app.add_flag("-v,--verbose", o.verbose, "Print libbpf's log, including the verifier's");
  app.add_flag("-q,--quiet", o.quiet, "No status line while recording and no summary; errors only");
}

// The command after the options, and what the flags say: an exit status
// for what is malformed.
std::optional<int> finish_options(const CLI::App& app, const OutputFlags& flags, RecordOptions& o) {
  o.command = app.remaining();
  if (!o.command.empty() && o.command[0] == "--") {
    o.command.erase(o.command.begin());
  } else if (!o.command.empty() && o.command[0].starts_with("-")) {
    std::fprintf(stderr, "ebprof-record: unknown option %s (see --help; put a command after --)\n",
                 o.command[0].c_str());
    return 2;
  }
  if (!parse_call_graph(flags.call_graph, o)) {
    std::fprintf(stderr,
                 "ebprof-record: --call-graph %s: expected fp, dwarf or dwarf,SIZE with SIZE a "
                 "multiple of 8 up to %u\n",
                 flags.call_graph.c_str(), format::kMaxUserStackBytes);
    return 2;
  }
  if (!parse_compression(flags.compression, o.writer)) {
    std::fprintf(stderr,
                 "ebprof-record: --compression %s: expected none, zstd or zstd:LEVEL with LEVEL "
                 "1-19\n",
                 flags.compression.c_str());
    return 2;
  }
  o.embed_symbols = !flags.no_embed;
  o.python = !flags.no_python;
  if (app.count("--switch-output")) {
    o.switch_output =
        parse_switch_output(flags.switch_output.empty() ? "signal" : flags.switch_output);
    if (!o.switch_output) {
      std::fprintf(stderr,
                   "ebprof-record: --switch-output=%s: expected signal, a size (100M; B, K, M or "
                   "G) or a time (60s; s, m, h or d)\n",
                   flags.switch_output.c_str());
      return 2;
    }
  }
  if (!flags.flight_recorder.empty()) {
    const std::optional<uint64_t> window = parse_duration_ns(flags.flight_recorder);
    const std::optional<uint64_t> size = flags.flight_recorder_size.empty()
                                             ? o.flight_recorder_bytes
                                             : parse_size(flags.flight_recorder_size);
    if (!window || !size || o.switch_output) {
      std::fprintf(stderr,
                   "ebprof-record: --flight-recorder=%s: expected a duration (60s; s, m, h or d), "
                   "a --flight-recorder-size with B, K, M or G, and no --switch-output\n",
                   flags.flight_recorder.c_str());
      return 2;
    }
    o.flight_recorder_ns = *window;
    o.flight_recorder_bytes = *size;
  } else if (!flags.flight_recorder_size.empty()) {
    std::fprintf(stderr, "ebprof-record: --flight-recorder-size needs --flight-recorder\n");
    return 2;
  }
  if (!o.switch_output && o.switch_max_files) {
    std::fprintf(stderr,
                 "ebprof-record: --switch-max-files needs --switch-output: add it (e.g. "
                 "--switch-output=60s)\n");
    return 2;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, RecordOptions& o) {
  o.argv.assign(argv, argv + argc);
  CLI::App app{
      "Sample kernel and user stacks with eBPF and stream them to a recording file.\n"
      "Without a target, samples all CPUs (like perf record -a).",
      "ebprof-record"};
  OutputFlags flags;
  app.set_version_flag("--version", version_line("ebprof-record"));
  add_output_options(app, o, flags);
  add_sampling_options(app, o);
  add_off_cpu_options(app, o);
  // Like perf: option parsing stops at the command, so its own options
  // (`ebprof-record ./server -p 8080`) stay its own.
  app.prefix_command();
  app.footer(
      "COMMAND [ARGS...] after the options (or after --) is launched and profiled;\n"
      "recording stops when it exits, and ebprof-record exits with its status.\n"
      "\n"
      "Examples:\n"
      "  ebprof-record -- ./server --port 8080         a command and its children\n"
      "  ebprof-record -p 1234 --duration 30           a running process, for 30 s\n"
      "  ebprof-record -a -F 999 -o host.data          the whole machine, until Ctrl-C\n"
      "  ebprof-record --call-graph dwarf -- python3 x.py   full stacks without frame pointers\n"
      "  ebprof-record --off-cpu -- ./app              where threads wait, too\n"
      "  ebprof-record -e cpu-clock:u -- ./app         user mode only\n"
      "  ebprof-record -e tracepoint:syscalls:sys_enter_openat -a   a stack on every hit");
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
  return finish_options(app, flags, o);
}

}  // namespace ebprof::record
