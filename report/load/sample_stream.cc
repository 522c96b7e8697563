#include "report/load/sample_stream.h"

#include "format/reader.h"

namespace ebprof::report {
namespace {

class SampleStream : public format::RecordingVisitor {
 public:
  SampleStream(std::span<const Recording> recordings, const SampleFilter& filter, NameTable& names,
               const SampleVisitor& visit, const SettleWindows& settle)
      : recordings_(recordings), filter_(filter), names_(names), visit_(visit), settle_(settle) {}

  // The next source of a merged file: its own ids, at the index the reader
  // gave load_recordings() too.
  void on_frame(const format::FrameInfo& frame) override {
    if (frame.source != source_ && frame.source < recordings_.size()) {
      source_ = frame.source;
      comm_ids_.clear();
      windows_ = {};
    }
  }

  void on_samples(format::SampleBatch&& batch) override {
    const Recording& r = recordings_[source_];
    for (size_t i = 0; i < batch.comms.size(); ++i)
      comm_ids_.emplace(batch.first_comm_id + i, names_.intern(batch.comms[i]));
    const View view = view_of(filter_, r.info);
    const uint64_t next_window = uint64_t{batch.first_window_id} + batch.windows.size();
    if (settle_)
      windows_.add(batch.first_window_id, std::move(batch.windows));
    kept_.clear();
    for (const format::Sample& s : batch.samples) {
      if (!in_view(view, s))
        continue;
      const uint32_t comm = this->comm(s.comm_id);
      if (!keeps(filter_, s, names_.all()[comm], start_of(r.info)))
        continue;
      kept_.emplace_back(SampleKey{.stack = {r.index, s.pid, capture_at(r, s.pid, s.time_ns),
                                             s.stack_id, s.window_id},
                                   .tid = s.tid,
                                   .comm = comm,
                                   .cpu = s.cpu,
                                   .state = thread_state(s)},
                         &s);
    }
    if (settle_)
      settle_keys(settle_, r, windows_, kept_);
    for (const auto& [key, sample] : kept_)
      visit_(r, key, *sample);
    windows_.forget_before(first_window_reached(r.info, next_window));
  }

 private:
  uint32_t comm(uint32_t id) {
    auto it = comm_ids_.find(id);
    return it == comm_ids_.end() ? names_.intern(kLostComm) : it->second;
  }
  std::span<const Recording> recordings_;
  const SampleFilter& filter_;
  NameTable& names_;
  const SampleVisitor& visit_;
  const SettleWindows& settle_;
  uint32_t source_ = 0;
  std::unordered_map<uint32_t, uint32_t> comm_ids_;
  IdRuns<format::UserWindow> windows_;  // those the samples still to come may use
  // The batch's kept samples and their keys, settled as the load's were.
  std::vector<std::pair<SampleKey, const format::Sample*>> kept_;
};

}  // namespace

void stream_samples(const std::string& path, std::span<const Recording> recordings,
                    const SampleFilter& filter, NameTable& names, const SampleVisitor& visit,
                    const SettleWindows& settle_windows) {
  SampleStream stream(recordings, filter, names, visit, settle_windows);
  format::read_recording(path, stream);
}

}  // namespace ebprof::report
