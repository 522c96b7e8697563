#pragma once

// Recordings of one host that cover the same time: two dumps of one flight
// recorder, a file given twice, a merged file read with its inputs. Their
// common samples are one sample each, found by what no two samples share:
// the time, CPU and thread of the same boot. Only samples in the times two
// recordings share are remembered.

#include <cstdint>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "format/contents.h"
#include "report/load/recording.h"

namespace ebprof::report {

class Overlaps {
 public:
  // The overlaps among `recordings`, loaded once whole; none (empty()) is
  // the common case, and costs nothing more.
  static Overlaps find(std::span<const Recording> recordings);

  bool empty() const { return spans_.empty(); }
  // What the header says: which recordings overlap, and for how long.
  const std::string& description() const { return description_; }
  // The time the recording at `at` shares with those before it, which a
  // duration of them all counts once.
  uint64_t shared_ns(size_t at) const { return at < shared_ns_.size() ? shared_ns_[at] : 0; }

  // Whether sample `s` of the recording loaded at position `at` (in the
  // order find() saw them) was seen before in another recording: counted
  // once, the first time. Remembers it.
  bool seen_before(size_t at, const format::Sample& s);

 private:
  struct Span {
    size_t boot;  // recordings of one boot share it
    uint64_t start_ns, end_ns;
  };
  struct Key {
    size_t boot;
    uint64_t time_ns;
    uint32_t tid;
    uint16_t cpu;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };

  std::vector<size_t> boot_of_;      // by position
  std::vector<uint64_t> shared_ns_;  // by position
  std::vector<Span> spans_;          // times two recordings of a boot share
  std::unordered_set<Key, KeyHash> seen_;
  std::string description_;
};

}  // namespace ebprof::report
