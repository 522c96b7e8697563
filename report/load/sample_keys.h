#pragma once

// Sample to key, in one place for the load's counts and the script's
// second pass alike: whether --view and the filters keep a sample, and
// what tells it apart from the others (its stack in the maps in effect,
// thread, comm, cgroup, CPU, state, waker and slice).

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "format/contents.h"
#include "report/load/recording.h"
#include "report/load/sample_filter.h"
#include "report/model/sample_key.h"

namespace ebprof::report {

// What the report does with one sample of the file.
enum class SampleVerdict : uint8_t {
  kKept,       // counted, under its key
  kOutOfView,  // what --view leaves out: no part of the report at all
  kFiltered,   // in view, and left out by a filter (or as the idle task's)
};

// The keys of one source's samples, batch after batch. Comm ids are the
// source's: a source starts a SampleKeys of its own.
class SampleKeys {
 public:
  SampleKeys(const SampleFilter& filter, NameTable& names) : filter_(filter), names_(names) {}

  // Takes `batch`'s comms and cgroups, of `recording`, for the keys of its
  // samples (and of later batches': comms are defined once).
  void begin_batch(const Recording& recording, const format::SampleBatch& batch);

  // Whether the report keeps `s`, of the batch begun last, and with kKept
  // its key in `key`.
  SampleVerdict key(const format::Sample& s, SampleKey& key) const;

 private:
  uint32_t comm(uint32_t id) const;

  const SampleFilter& filter_;
  NameTable& names_;
  const uint32_t lost_comm_ = names_.intern(kLostComm);
  const Recording* recording_ = nullptr;
  View view_ = View::kOnCpu;
  std::unordered_map<uint32_t, uint32_t> comm_ids_;  // the file's id: the report's
  std::vector<uint32_t> cgroups_;                    // the batch's, as names
};

// What the recording's samples say a thread was doing.
ThreadState thread_state(const format::Sample& s);

}  // namespace ebprof::report
