#include "report/write/dump_writer.h"

#include <cinttypes>

#include "common/text.h"
#include "format/losses.h"
#include "format/reader.h"

namespace ebprof::report {
namespace {

void write_addresses(std::ostream& out, const char* label, const std::vector<uint64_t>& ips) {
  out << "    " << label << ":";
  for (uint64_t ip : ips)
    out << ' ' << hex(ip);
  out << '\n';
}

class Dumper : public format::RecordingVisitor {
 public:
  explicit Dumper(std::ostream& out) : out_(out) {}

  void on_frame(const format::FrameInfo& f) override {
    out_ << string_printf(
        "\n# frame %" PRIu64 " at byte %" PRIu64 ": %s, %u bytes stored%s, %u raw\n", f.index,
        f.offset, f.kind, f.stored_size, f.compressed ? " (zstd)" : "", f.raw_size);
  }
  void on_info(format::RecordingInfo&& i) override {
    out_ << "writer " << i.writer_version << "\nhost " << i.hostname << " " << i.kernel_release
         << " " << i.machine << "\ncommand";
    for (const auto& a : i.command_line)
      out_ << ' ' << a;
    out_ << string_printf("\nevent %s frequency %" PRIu64 " period %" PRIu64
                          " cpus %u transport %s\n",
                          i.event.c_str(), i.sample_frequency, i.sample_period, i.cpu_count,
                          i.transport.c_str())
         << string_printf("start realtime %" PRIu64 " (%s) monotonic %" PRIu64 "\n",
                          i.start_realtime_ns, utc_time(i.start_realtime_ns).c_str(),
                          i.start_monotonic_ns);
    if (i.call_graph == format::CallGraph::kDwarf) {
      out_ << "call graph dwarf, " << i.user_stack_bytes << " bytes in blocks of "
           << i.stack_block_bytes << ", registers";
      for (uint16_t r : i.user_registers)
        out_ << ' ' << r;
      if (i.window_reach)
        out_ << ", windows reached back " << i.window_reach;
      out_ << '\n';
    }
  }
  void on_kernel_symbols(std::vector<format::KernelSymbol>&& symbols) override {
    for (const auto& s : symbols)
      out_ << hex(s.address) << " size " << hex(s.size) << ' ' << s.name
           << (s.module.empty() ? "" : " [" + s.module + "]") << '\n';
  }
  void on_process(format::ProcessInfo&& p) override {
    out_ << string_printf("pid %u comm %s captured %" PRIu64 "%s%s\n", p.pid, p.comm.c_str(),
                          p.captured_at_ns,
                          p.maps_error.empty() ? "" : " maps error: ", p.maps_error.c_str());
    if (p.place.pid_namespace)
      out_ << string_printf("  pid namespace %" PRIu64 " (pid %u there), mount namespace %" PRIu64
                            ", root %s\n",
                            p.place.pid_namespace, p.place.namespace_pid, p.place.mount_namespace,
                            p.place.root.c_str());
    for (const auto& m : p.mappings)
      out_ << "  " << hex(m.start) << '-' << hex(m.end) << " offset " << hex(m.file_offset) << ' '
           << m.path << " build-id " << hex_bytes(m.build_id)
           << (m.debuglink.empty() ? "" : " debuglink " + m.debuglink) << '\n';
    if (p.python != format::PythonRuntime{})
      out_ << string_printf("  python 0x%08x build-id %s eval %s-%s%s%s\n", p.python.version,
                            hex_bytes(p.python.build_id).c_str(), hex(p.python.eval_start).c_str(),
                            hex(p.python.eval_end).c_str(),
                            p.python.error.empty() ? "" : " not read: ", p.python.error.c_str());
  }
  void on_samples(format::SampleBatch&& b) override {
    for (size_t i = 0; i < b.stacks.size(); ++i) {
      out_ << "stack " << b.first_stack_id + i << '\n';
      write_addresses(out_, "kernel", b.stacks[i].kernel);
      write_addresses(out_, "user", b.stacks[i].user);
      const format::Stack& s = b.stacks[i];
      for (size_t f = 0; f < s.python_frames(); ++f) {
        const format::PythonFrame p = s.python_frame_at(f);
        out_ << string_printf("  python %s lasti %d checksum 0x%08x%s\n", hex(p.code).c_str(),
                              p.lasti, p.checksum, p.entry ? " entry" : "");
      }
      if (s.python_end != format::PythonEnd::kNone)
        out_ << "  python end " << static_cast<int>(s.python_end) << '\n';
    }
    for (size_t i = 0; i < b.comms.size(); ++i)
      out_ << "comm " << b.first_comm_id + i << ' ' << b.comms[i] << '\n';
    for (size_t i = 0; i < b.cgroups.size(); ++i)
      out_ << "cgroup " << i << " id " << b.cgroups[i].id << ' ' << b.cgroups[i].path << '\n';
    write_windows(b);
    for (const auto& s : b.samples)
      out_ << string_printf("sample time %" PRIu64 " pid %u tid %u cpu %u stack %u comm %u",
                            s.time_ns, s.pid, s.tid, s.cpu, s.stack_id, s.comm_id)
           << (s.window_id == format::kNoWindow ? "" : " window " + std::to_string(s.window_id))
           << (s.cgroup == format::kNoCgroup ? "" : " cgroup " + std::to_string(s.cgroup))
           << (s.holds_gil ? " gil" : "") << '\n';
  }
  void on_elf_cfi(format::ElfCfi&& c) override {
    out_ << "cfi " << c.path << " build-id " << hex_bytes(c.build_id) << " eh_frame_hdr "
         << hex(c.eh_frame_hdr_address) << " (" << c.eh_frame_hdr.size() << " bytes) eh_frame "
         << hex(c.eh_frame_address) << " ("
         << (c.eh_frame.empty() && c.eh_frame_size
                 ? std::to_string(c.pieces.size()) + " entries of " +
                       std::to_string(c.eh_frame_size) + " bytes"
                 : std::to_string(c.eh_frame.size()) + " bytes")
         << ")\n";
  }
  void on_elf_symbols(format::EmbeddedSymbols&& e) override {
    out_ << "binary " << e.path << " build-id " << hex_bytes(e.build_id) << '\n';
    for (const auto& s : e.segments)
      out_ << "  load offset " << hex(s.offset) << " vaddr " << hex(s.vaddr) << " size "
           << hex(s.file_size) << '\n';
    for (const auto& s : e.symbols)
      out_ << "  " << hex(s.address) << " size " << hex(s.size) << ' ' << s.name << '\n';
  }
  void on_source(format::Source&& s) override {
    out_ << "source " << s.index << ' ' << s.path
         << string_printf(" (format %u.%u)\n", s.version_major, s.version_minor);
  }
  void on_jit_symbols(format::JitSymbols&& j) override {
    out_ << "jit pid " << j.pid << '\n';
    for (const auto& s : j.symbols)
      out_ << "  " << hex(s.address) << " size " << hex(s.size) << ' ' << s.name << '\n';
  }
  void on_python_code(format::PythonCode&& p) override {
    out_ << "python code pid " << p.pid << '\n';
    for (const auto& c : p.codes)
      out_ << string_printf("  %s checksum 0x%08x %s %s:%u line table %zu bytes\n",
                            hex(c.address).c_str(), c.checksum, c.qualname.c_str(),
                            c.filename.c_str(), c.first_line, c.line_table.size());
  }
  void on_end(format::RecordingEnd&& e) override {
    out_ << "end monotonic " << e.end_monotonic_ns << '\n';
    for (const auto& l : e.losses)
      out_ << (l.sample_kept ? "partial " : "lost ") << l.count << ' '
           << format::loss_cause_name(l.cause) << '\n';
    if (e.task_events_lost)
      out_ << "mapping events lost " << e.task_events_lost << '\n';
  }
  void on_losses(format::Losses&& losses) override {
    out_ << "losses at " << losses.time_ns << '\n';
    for (const auto& l : losses.counts)
      out_ << "  " << (l.cpu == format::kNoCpu ? "recorder" : "cpu " + std::to_string(l.cpu))
           << (l.sample_kept ? " partial " : " lost ") << l.count << ' '
           << format::loss_cause_name(l.cause) << '\n';
  }

 private:
  void write_windows(const format::SampleBatch& b) {
    if (!b.blocks.empty())
      out_ << "stack blocks from " << b.first_block_id << ", " << b.blocks.size() << " bytes\n";
    for (size_t i = 0; i < b.windows.size(); ++i) {
      const format::UserWindow& w = b.windows[i];
      out_ << "window " << b.first_window_id + i << " base " << hex(w.base) << " size " << w.size
           << " abi " << static_cast<int>(w.abi) << "\n    regs:";
      for (uint64_t r : w.regs)
        out_ << ' ' << hex(r);
      out_ << "\n    blocks:";
      for (uint32_t id : w.blocks)
        out_ << ' ' << id;
      out_ << '\n';
    }
  }

  std::ostream& out_;
};

}  // namespace

void write_dump(std::ostream& out, const std::string& path) {
  Dumper dumper(out);
  format::ReadResult r = format::read_recording(path, dumper);
  out << string_printf("\n# %" PRIu64 " frames, format %u.%u\n", r.frames, r.version_major,
                       r.version_minor);
  if (!r.complete)
    out << "# warning: " << r.warning << '\n';
}

}  // namespace ebprof::report
