#include "report/load/sample_stream.h"

#include <optional>

#include "format/reader.h"
#include "report/load/sample_keys.h"

namespace ebprof::report {
namespace {

class SampleStream : public format::RecordingVisitor {
 public:
  SampleStream(std::span<const Recording> recordings, const SampleFilter& filter, NameTable& names,
               const SampleVisitor& visit, const SettleStacks& settle)
      : recordings_(recordings),
        filter_(filter),
        names_(names),
        visit_(visit),
        settle_(settle),
        keys_(std::in_place, filter, names) {}

  // The next source of a merged file: its own ids, at the index the reader
  // gave load_recordings() too.
  void on_frame(const format::FrameInfo& frame) override {
    if (frame.source != source_ && frame.source < recordings_.size()) {
      source_ = frame.source;
      keys_.emplace(filter_, names_);
      windows_ = {};
    }
  }

  void on_samples(format::SampleBatch&& batch) override {
    const Recording& r = recordings_[source_];
    keys_->begin_batch(r, batch);
    const uint64_t next_window = uint64_t{batch.first_window_id} + batch.windows.size();
    if (settle_)
      windows_.add(batch.first_window_id, std::move(batch.windows));
    kept_.clear();
    SampleKey key;
    for (const format::Sample& s : batch.samples)
      if (keys_->key(s, key) == SampleVerdict::kKept)
        kept_.emplace_back(key, &s);
    if (settle_)
      settle_keys(settle_, r, windows_, kept_);
    for (const auto& [k, sample] : kept_)
      visit_(r, k, *sample);
    windows_.forget_before(first_window_reached(r.info, next_window));
  }

 private:
  std::span<const Recording> recordings_;
  const SampleFilter& filter_;
  NameTable& names_;
  const SampleVisitor& visit_;
  const SettleStacks& settle_;
  uint32_t source_ = 0;
  std::optional<SampleKeys> keys_;      // the source's
  IdRuns<format::UserWindow> windows_;  // those the samples still to come may use
  // The batch's kept samples and their keys, settled as the load's were.
  std::vector<std::pair<SampleKey, const format::Sample*>> kept_;
};

}  // namespace

void stream_samples(const std::string& path, std::span<const Recording> recordings,
                    const SampleFilter& filter, NameTable& names, const SampleVisitor& visit,
                    const SettleStacks& settle) {
  SampleStream stream(recordings, filter, names, visit, settle);
  format::read_recording(path, stream);
}

}  // namespace ebprof::report
