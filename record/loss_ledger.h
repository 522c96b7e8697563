#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "format/contents.h"

namespace ebprof::record {

// Every sample lost, in one place: the kernel's running counts per CPU and
// cause (BPF keeps them), and the records the recorder could not decode.
// The file gets what grew since the last report; the summary the totals.
class LossLedger {
 public:
  // The kernel's running counts, as BpfSampler::losses() reads them.
  void update_kernel(std::vector<format::LossCount> running) { kernel_ = std::move(running); }
  void count_malformed() { ++malformed_; }

  // What grew since the last report, per CPU and cause; nullopt when
  // nothing did.
  std::optional<format::Losses> take_report(uint64_t now_ns);
  // Every loss so far by cause, summed over CPUs.
  std::vector<format::LossCount> totals() const;
  // Totals since the last start_file() (--switch-output): each file's end
  // frame holds its own, so that the files add up to the run.
  std::vector<format::LossCount> file_totals() const;
  void start_file() { file_base_ = totals(); }
  // Samples dropped, and samples written with part of their stack missing.
  uint64_t dropped() const { return sum(false); }
  uint64_t partial() const { return sum(true); }

 private:
  std::vector<format::LossCount> all() const;
  uint64_t sum(bool sample_kept) const;

  std::vector<format::LossCount> kernel_;
  uint64_t malformed_ = 0;
  std::map<std::pair<uint16_t, format::LossCause>, uint64_t> reported_;  // by CPU, cause
  std::vector<format::LossCount> file_base_;                             // totals() at start_file()
};

}  // namespace ebprof::record
