#include "report/write/info_writer.h"

#include <cinttypes>

#include "common/text.h"
#include "format/contents.h"
#include "report/write/frame_text.h"

namespace ebprof::report {
namespace {

// " (of them 12 intervals off CPU, 3.21 s)", or "" without any.
std::string off_cpu_summary(const RecordingFacts& f) {
  return f.off_cpu_intervals ? string_printf(" (of them %" PRIu64 " intervals off CPU, %.3f s)",
                                             f.off_cpu_intervals, f.off_cpu_ns / 1e9)
                             : "";
}

// Where and when samples were dropped: "cpu 0: 5, cpu 1: 7; reported from
// 1.20 s to 3.41 s", or "" when none were or the file predates loss reports.
std::string loss_spread(const RecordingFacts& f) {
  std::string out;
  for (const auto& [cpu, count] : f.dropped_by_cpu)
    out += (out.empty() ? "" : ", ") +
           (cpu == format::kNoCpu ? std::string("recorder") : "cpu " + std::to_string(cpu)) + ": " +
           std::to_string(count);
  if (out.empty())
    return out;
  return out + string_printf("; reported from %.2f s to %.2f s", f.dropped_from_s, f.dropped_to_s);
}

void write_what(std::ostream& out, const RecordingFacts& f) {
  const RecordingSummary& s = f.summary;
  std::string command;
  for (const auto& arg : f.command_line)
    command += (command.empty() ? "" : " ") + arg;
  out << "recording       " << s.path << "\n";
  if (!f.source_path.empty())
    out << "source          " << f.source_index << ": " << f.source_path
        << string_printf(" (format %u.%u)", f.source_version_major, f.source_version_minor) << "\n";
  out << string_printf("format          %u.%u, written by ebprof ", f.version_major,
                       f.version_minor)
      << s.writer_version << "\n"
      << "host            " << s.hostname << " (Linux " << s.kernel_release << " " << s.machine
      << ")\n"
      << "command line    " << command << "\n"
      << (s.sampling
              ? string_printf("event           %s %s on %u CPUs, transport %s\n", s.event.c_str(),
                              describe_rate(s).c_str(), s.cpu_count, f.transport.c_str())
              : string_printf("event           none (--off-cpu-only) on %u CPUs, transport %s\n",
                              s.cpu_count, f.transport.c_str()))
      << (s.off_cpu.empty()
              ? std::string()
              : string_printf(
                    "off-cpu         through %s, intervals of %.3f ms and more%s\n",
                    s.off_cpu.c_str(), f.off_cpu_min_block_ns / 1e6,
                    f.off_cpu_max_block_ns
                        ? string_printf(" up to %.3f ms", f.off_cpu_max_block_ns / 1e6).c_str()
                        : ""))
      << "started         " << utc_time(s.start_realtime_ns) << "\n";
}

// --call-graph dwarf: what the windows hold and how the stacks unwound.
void write_unwinding(std::ostream& out, const RecordingFacts& f, const UnwindCounts& u) {
  out << string_printf("call graph      dwarf, windows of up to %u bytes: %zu distinct, %" PRIu64
                       " bytes of distinct stack; CFI of %s embedded\n",
                       f.user_stack_bytes, f.windows, f.window_bytes,
                       count_of(f.embedded_cfi, "binary", "binaries").c_str());
  uint64_t cut = 0;
  std::string why;
  for (const auto& [reason, n] : u.cut) {
    cut += n;
    why += (why.empty() ? "" : ", ") + std::string(reason_text(reason)) + ": " + std::to_string(n);
  }
  out << string_printf("unwound         %" PRIu64 " samples to the outermost frame, %" PRIu64
                       " onto the frame-pointer chain, %" PRIu64 " cut short",
                       u.full, u.spliced, cut)
      << (why.empty() ? "" : " (" + why + ")") << "\n";
}

void write_holds(std::ostream& out, const RecordingFacts& f,
                 const std::vector<std::pair<UnnamedReason, uint64_t>>& unnamed) {
  const RecordingSummary& s = f.summary;
  out << string_printf("duration        %.2f s%s\n", s.duration_s,
                       s.ended ? "" : " (no end frame: the recorder was killed or the file is cut)")
      << string_printf("samples         %" PRIu64 "%s\n", s.samples, off_cpu_summary(f).c_str())
      << string_printf("stacks          %zu distinct\n", f.stacks) << "processes       "
      << f.processes << " (" << count_of(f.captures, "maps capture", "maps captures") << ", "
      << count_of(f.mappings, "mapping", "mappings") << ")\n"
      << "lost            " << describe_losses(s.losses) << "\n";
  if (std::string spread = loss_spread(f); !spread.empty())
    out << "lost where      " << spread << "\n";
  out << "partial stacks  " << describe_losses(s.losses, true) << "\n";
  if (f.task_events_lost)
    out << string_printf("mapping events  %" PRIu64
                         " lost: some short-lived processes' maps may be incomplete\n",
                         f.task_events_lost);
  out << string_printf("kernel          build-id %s, %zu modules (%zu with a build-id)\n",
                       hex_bytes(f.kernel_build_id).c_str(), f.kernel_modules,
                       f.kernel_modules_with_build_id)
      << string_printf(
             "kernel symbols  %zu%s\n", f.kernel_symbols,
             f.kernel_addresses_hidden
                 ? " (addresses were hidden by kernel.kptr_restrict: kernel frames are unnamed)"
                 : "")
      << "embedded        " << count_of(f.embedded_binaries, "binary", "binaries") << ", "
      << count_of(f.embedded_functions, "function symbol", "function symbols") << "\n"
      << string_printf(
             "symbol coverage %zu of %zu sampled binaries with a build-id have embedded "
             "symbols (a binary has none when no sampled address is in a function symbol); "
             "%zu sampled binaries have no build-id\n",
             f.sampled_with_embedded, f.sampled_binaries, f.sampled_without_build_id);
  out << "unnamed frames  " << describe_unnamed(unnamed, s.samples) << "\n";
  if (f.python_processes) {
    static constexpr const char* kEnds[] = {
        "", "whole", "no thread state", "unreadable", "not a code object", "too deep"};
    static_assert(std::size(kEnds) == format::kPythonEnds);
    std::string walks;
    for (size_t end = 1; end < format::kPythonEnds; ++end)
      if (f.python_walks[end])
        walks +=
            (walks.empty() ? "" : ", ") + std::to_string(f.python_walks[end]) + " " + kEnds[end];
    out << "python          " << count_of(f.python_processes, "process", "processes") << " read, "
        << count_of(f.python_code_objects, "code object", "code objects")
        << "; samples' frames: " << (walks.empty() ? "none" : walks) << "\n";
  }
  for (const auto& [why, processes] : s.python_not_read)
    out << "python          frames not read in " << count_of(processes, "process", "processes")
        << ": " << why << "\n";
  if (!s.warning.empty())
    out << "warning         " << s.warning << "\n";
}

void write_sections(std::ostream& out, const RecordingFacts& f) {
  out << "\nsection           frames        bytes    raw bytes\n";
  uint64_t frames = 0, stored = 0, raw = 0;
  for (const FileSection& s : f.sections) {
    out << string_printf("%-16s %7" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", s.kind.c_str(),
                         s.frames, s.stored_bytes, s.raw_bytes);
    frames += s.frames;
    stored += s.stored_bytes;
    raw += s.raw_bytes;
  }
  out << string_printf("%-16s %7" PRIu64 " %12" PRIu64 " %12" PRIu64
                       "  (+16 bytes of file header)\n",
                       "total", frames, stored, raw);
  if (f.summary.samples)
    out << string_printf("bytes per sample %.1f\n",
                         double(stored + 16) / double(f.summary.samples));
}

}  // namespace

void write_info(std::ostream& out, const RecordingFacts& facts,
                const std::vector<std::pair<UnnamedReason, uint64_t>>& unnamed,
                const UnwindCounts& unwound) {
  write_what(out, facts);
  if (facts.user_stack_bytes)
    write_unwinding(out, facts, unwound);
  write_holds(out, facts, unnamed);
  write_sections(out, facts);
}

}  // namespace ebprof::report
