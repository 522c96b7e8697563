#include "report/write/script_writer.h"

#include <cinttypes>

#include "common/text.h"
#include "report/write/frame_text.h"

namespace ebprof::report {

void write_script_sample(std::ostream& out, const ScriptSample& s, const FrameView& frames) {
  // An interval off CPU reads like perf's offcpu-time event: its length as
  // the period; its state's letter ends the event name, which perf-script
  // tools take as one word.
  const bool off = s.key.state != ThreadState::kOnCpu;
  out << s.comm << ' ' << s.key.stack.pid << '/' << s.key.tid
      << string_printf(" [%03u] %" PRIu64 ".%06" PRIu64 ": %10" PRIu64 " ", s.key.cpu,
                       s.time_ns / 1'000'000'000, s.time_ns % 1'000'000'000 / 1000, s.period)
      << (off ? std::string("offcpu-time-") + state_name(s.key.state)[0] : s.event) << ":\n";
  write_script_frames(out, frames);
}

void write_script_frames(std::ostream& out, const FrameView& frames) {
  for (const Frame& f : frames) {
    out << string_printf("\t%16" PRIx64 " ", f.address);
    // perf's "[unknown] (MODULE)", which perf-script consumers
    // (stackcollapse-perf.pl) read the module from; a frame the report
    // adds (the off-CPU state, a cut stack's reason) keeps its words.
    if (!f.named() && !f.synthetic()) {
      out << "[unknown] (" << (f.path.empty() ? f.module : f.path) << ")\n";
      continue;
    }
    out << frame_name(f);
    // Like perf script --inline: an inlined function has no offset of its
    // own, and says so where the module goes.
    if (f.kind == FrameKind::kInlined) {
      out << " (inlined)\n";
      continue;
    }
    if (f.named())
      out << "+0x" << string_printf("%" PRIx64, f.offset);
    out << " (" << (f.path.empty() ? f.module : f.path) << ")\n";
  }
  out << '\n';
}

}  // namespace ebprof::report
