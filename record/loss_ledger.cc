#include "record/loss_ledger.h"

#include "format/losses.h"

namespace ebprof::record {

std::vector<format::LossCount> LossLedger::all() const {
  std::vector<format::LossCount> counts = kernel_;
  if (malformed_)
    counts.push_back({format::LossCause::kMalformedRecord, malformed_});
  return counts;
}

std::optional<format::Losses> LossLedger::take_report(uint64_t now_ns) {
  format::Losses report{now_ns, {}};
  for (format::LossCount l : all()) {
    uint64_t& reported = reported_[{l.cpu, l.cause}];
    if (l.count == reported)
      continue;
    l.count -= std::exchange(reported, l.count);
    report.counts.push_back(l);
  }
  if (report.counts.empty())
    return std::nullopt;
  return report;
}

std::vector<format::LossCount> LossLedger::totals() const {
  return format::totals_by_cause(all());
}

std::vector<format::LossCount> LossLedger::file_totals() const {
  std::vector<format::LossCount> out;
  for (format::LossCount l : totals()) {
    for (const format::LossCount& base : file_base_)
      if (base.cause == l.cause && base.sample_kept == l.sample_kept)
        l.count -= base.count;
    if (l.count)
      out.push_back(l);
  }
  return out;
}

uint64_t LossLedger::sum(bool sample_kept) const {
  uint64_t n = 0;
  for (const format::LossCount& l : all())
    n += l.sample_kept == sample_kept ? l.count : 0;
  return n;
}

}  // namespace ebprof::record
