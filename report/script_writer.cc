#include "report/script_writer.h"

#include <algorithm>
#include <cinttypes>
#include <map>
#include <optional>
#include <tuple>

#include "format/reader.h"
#include "report/symbolizer.h"
#include "report/text.h"

namespace ebprof::report {
namespace {

class ScriptWriter : public format::RecordingVisitor {
 public:
  ScriptWriter(std::ostream& out, std::span<const Profile> sources, const SampleFilter& samples,
               const StackFilter& stacks, SymbolizeOptions symbols)
      : out_(out),
        sources_(sources),
        samples_(samples),
        stacks_(stacks),
        user_(*sources.front().embedded_symbols, sources.front().jit_symbols, std::move(symbols)) {
    begin_source();
  }

  // The next source of a merged file: its own tables, ids and symbolizer,
  // at the index the reader gave load_profiles too.
  void on_frame(const format::FrameInfo& frame) override {
    if (frame.source != next_ && frame.source < sources_.size()) {
      next_ = frame.source;
      begin_source();
    }
  }

  void on_samples(format::SampleBatch&& batch) override {
    for (size_t i = 0; i < batch.comms.size(); ++i)
      comms_.emplace(batch.first_comm_id + i, std::move(batch.comms[i]));
    const View view = view_of(&samples_, profile_->info);
    for (const format::Sample& s : batch.samples) {
      if (!in_view(view, s))
        continue;
      auto comm_it = comms_.find(s.comm_id);
      const std::string& comm = comm_it == comms_.end() ? kLostComm : comm_it->second;
      if (!keeps(samples_, s, comm, profile_->info.start_monotonic_ns))
        continue;
      const Frames* frames = shown(s.pid, capture_at(*profile_, s.pid, s.time_ns), s.stack_id);
      if (!frames)
        continue;
      // An interval off CPU reads like perf's offcpu-time event: its
      // length as the period; its state's letter ends the event name, which
      // perf-script tools take as one word.
      const bool off = s.blocked_ns != 0;
      out_ << comm << ' ' << s.pid << '/' << s.tid
           << format(" [%03u] %" PRIu64 ".%06" PRIu64 ": %10" PRIu64 " ", s.cpu,
                     s.time_ns / 1'000'000'000, s.time_ns % 1'000'000'000 / 1000,
                     off ? s.blocked_ns : period_)
           << (off ? std::string("offcpu-time-") + state_name(static_cast<uint8_t>(s.state))[0]
                   : profile_->info.event)
           << ":\n";
      write_script_frames(out_, *frames);
    }
  }

 private:
  // A stack's frames as the stack filter leaves them, or null when it drops
  // the stack: worked out once per distinct stack, not per sample.
  const Frames* shown(uint32_t pid, uint32_t capture, uint32_t stack_id) {
    auto [it, inserted] = shown_.try_emplace({pid, capture, stack_id});
    if (inserted) {
      std::vector<SymbolizedStack> one{
          {pid, 0, 0, "", 1, symbolizer_->frames(pid, capture, stack_id)}};
      filter_stacks(stacks_, one);
      if (!one.empty())
        it->second = std::move(one[0].frames);
    }
    return it->second ? &*it->second : nullptr;
  }

  void begin_source() {
    profile_ = &sources_[next_];
    symbolizer_.emplace(*profile_, user_);
    shown_.clear();
    comms_.clear();
    // perf prints the period of each sample.
    period_ = std::max<uint64_t>(sample_weight(profile_->info), 1);
  }

  std::ostream& out_;
  std::span<const Profile> sources_;
  size_t next_ = 0;
  const Profile* profile_ = nullptr;
  const SampleFilter& samples_;
  const StackFilter& stacks_;
  UserSymbolizer user_;  // one for all sources: each binary opened once
  std::optional<Symbolizer> symbolizer_;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::optional<Frames>> shown_;
  std::unordered_map<uint32_t, std::string> comms_;
  uint64_t period_ = 1;
};

}  // namespace

void write_script_frames(std::ostream& out, std::span<const Frame> frames) {
  for (const Frame& f : frames) {
    out << format("\t%16" PRIx64 " ", f.address) << f.name;
    // Like perf script --inline: an inlined function has no offset of its
    // own, and says so where the module goes.
    if (f.inlined) {
      out << " (inlined)\n";
      continue;
    }
    if (f.resolved)
      out << "+0x" << format("%" PRIx64, f.offset);
    out << " (" << (f.path.empty() ? f.module : f.path) << ")\n";
  }
  out << '\n';
}

void write_script(std::ostream& out, const std::string& path, std::span<const Profile> sources,
                  const SampleFilter& samples, const StackFilter& stacks,
                  SymbolizeOptions symbols) {
  ScriptWriter writer(out, sources, samples, stacks, std::move(symbols));
  format::read_recording(path, writer);
}

}  // namespace ebprof::report
