#include "report/info_writer.h"

#include <cinttypes>
#include <set>

#include "report/symbolizer.h"
#include "report/text.h"

namespace ebprof::report {
namespace {

// Build-ids of the binaries that sampled user frames fall in, with the
// number of those binaries that have no build-id (which cannot be embedded).
std::set<std::string> sampled_build_ids(const Profile& p, size_t& without_build_id) {
  std::set<std::string> ids;
  std::set<std::string> anonymous;
  for (const StackCount& c : p.counts) {
    auto it = p.processes.find(c.pid);
    if (it == p.processes.end())
      continue;
    auto captures = std::span(it->second).subspan(c.capture);
    auto stack = p.stacks.find(c.stack_id);
    if (stack == p.stacks.end())
      continue;  // lost with a damaged frame
    for (uint64_t ip : stack->second.user) {
      const format::Mapping* m = find_mapping(captures, ip);
      if (m && m->path.starts_with("/"))
        (m->build_id.empty() ? anonymous.insert(m->path) : ids.insert(m->build_id));
    }
  }
  without_build_id = anonymous.size();
  return ids;
}

// " (of them 12 intervals off CPU, 3.21 s)", or "" without any.
std::string off_cpu_summary(const Profile& p) {
  uint64_t intervals = 0, ns = 0;
  for (const StackCount& c : p.counts)
    if (c.off_cpu != kOnCpu) {
      intervals += c.count;
      ns += c.time_ns;
    }
  return intervals ? format(" (of them %" PRIu64 " intervals off CPU, %.3f s)", intervals, ns / 1e9)
                   : "";
}

}  // namespace

void write_info(std::ostream& out, const Profile& p,
                const std::vector<std::pair<std::string, uint64_t>>& unnamed) {
  const auto& info = p.info;
  std::string command;
  for (const auto& arg : info.command_line)
    command += (command.empty() ? "" : " ") + arg;
  size_t captures = 0, mappings = 0;
  for (const auto& [pid, list] : p.processes) {
    captures += list.size();
    for (const auto& c : list)
      mappings += c.mappings.size();
  }
  size_t embedded_functions = 0;
  for (const auto& [id, table] : *p.embedded_symbols)
    embedded_functions += table.size();
  size_t without_build_id = 0;
  std::set<std::string> sampled = sampled_build_ids(p, without_build_id);
  size_t covered = 0;
  for (const auto& id : sampled)
    covered += p.embedded_symbols->count(id);

  out << "recording       " << p.path << "\n";
  if (!p.source.path.empty())
    out << "source          " << p.source.index << ": " << p.source.path
        << format(" (format %u.%u)", p.source.version_major, p.source.version_minor) << "\n";
  out << format("format          %u.%u, written by ebprof ", p.version_major, p.version_minor)
      << info.writer_version << "\n"
      << "host            " << info.hostname << " (Linux " << info.kernel_release << " "
      << info.machine << ")\n"
      << "command line    " << command << "\n"
      << (info.sampling
              ? format("event           %s %s on %u CPUs, transport %s\n", info.event.c_str(),
                       describe_rate(info).c_str(), info.cpu_count, info.transport.c_str())
              : format("event           none (--off-cpu-only) on %u CPUs, transport %s\n",
                       info.cpu_count, info.transport.c_str()))
      << (info.off_cpu.empty()
              ? std::string()
              : format("off-cpu         through %s, intervals of %.3f ms and more%s\n",
                       info.off_cpu.c_str(), info.off_cpu_min_block_ns / 1e6,
                       info.off_cpu_max_block_ns
                           ? format(" up to %.3f ms", info.off_cpu_max_block_ns / 1e6).c_str()
                           : ""))
      << "started         " << utc_time(info.start_realtime_ns) << "\n"
      << format("duration        %.2f s%s\n", duration_s(p),
                p.end ? "" : " (no end frame: the recorder was killed or the file is cut)")
      << format("samples         %" PRIu64 "%s\n", p.total_samples, off_cpu_summary(p).c_str())
      << format("stacks          %zu distinct\n", p.stacks.size())
      << format("processes       %zu (%zu maps captures, %zu mappings)\n", p.processes.size(),
                captures, mappings)
      << "lost            " << describe_losses(p) << "\n";
  if (std::string spread = describe_loss_spread(p); !spread.empty())
    out << "lost where      " << spread << "\n";
  out << "partial stacks  " << describe_losses(p, true) << "\n";
  if (p.end && p.end->task_events_lost)
    out << format("mapping events  %" PRIu64
                  " lost: some short-lived processes' maps may be incomplete\n",
                  p.end->task_events_lost);
  size_t modules_with_id = 0;
  for (const auto& m : info.kernel_modules)
    modules_with_id += !m.build_id.empty();
  out << format("kernel          build-id %s, %zu modules (%zu with a build-id)\n",
                hex_bytes(info.kernel_build_id).c_str(), info.kernel_modules.size(),
                modules_with_id)
      << format("kernel symbols  %zu%s\n", p.kernel_symbols.size(),
                info.kernel_addresses_hidden
                    ? " (addresses were hidden by kernel.kptr_restrict: kernel frames are unnamed)"
                    : "")
      << format("embedded        %zu binaries, %zu function symbols\n", p.embedded_symbols->size(),
                embedded_functions)
      << format(
             "symbol coverage %zu of %zu sampled binaries with a build-id have embedded "
             "symbols (a binary has none when no sampled address is in a function symbol); "
             "%zu sampled binaries have no build-id\n",
             covered, sampled.size(), without_build_id);
  out << "unnamed frames  " << describe_unnamed(unnamed, p.total_samples) << "\n";
  if (!p.warning.empty())
    out << "warning         " << p.warning << "\n";

  out << "\nsection           frames        bytes    raw bytes\n";
  uint64_t frames = 0, stored = 0, raw = 0;
  for (const auto& s : p.sections) {
    out << format("%-16s %7" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", s.kind.c_str(), s.frames,
                  s.stored_bytes, s.raw_bytes);
    frames += s.frames;
    stored += s.stored_bytes;
    raw += s.raw_bytes;
  }
  out << format("%-16s %7" PRIu64 " %12" PRIu64 " %12" PRIu64 "  (+16 bytes of file header)\n",
                "total", frames, stored, raw);
  if (p.total_samples)
    out << format("bytes per sample %.1f\n", double(stored + 16) / double(p.total_samples));
}

}  // namespace ebprof::report
