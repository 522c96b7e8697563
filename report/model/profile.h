#pragma once

// The report's profile model, part 3: what writers are given. Symbolized
// stacks with their keys and values, the names they share, and what a
// report's header says. Nothing here knows how it was computed.

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/contents.h"
#include "report/model/frame.h"
#include "report/model/sample_key.h"

namespace ebprof::report {

// Every distinct frame of a report once; stacks refer to them by index.
// Outer frames (main, the thread start) recur in every stack: stored once,
// not once per stack.
class FrameTable {
 public:
  uint32_t intern(Frame frame);
  const Frame& operator[](uint32_t id) const { return frames_[id]; }
  // Keeps `ids` for as long as the table lives; the span stays valid.
  std::span<const uint32_t> keep(std::vector<uint32_t> ids);
  size_t size() const { return frames_.size(); }

 private:
  struct Hash {
    size_t operator()(const Frame& f) const;
  };
  std::deque<Frame> frames_;
  std::unordered_map<Frame, uint32_t, Hash> index_;
  std::deque<std::vector<uint32_t>> lists_;  // chunks of kept lists
};

// The frames of one stack, leaf first, read-only.
class FrameView {
 public:
  class Iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Frame;
    using difference_type = std::ptrdiff_t;
    using pointer = const Frame*;
    using reference = const Frame&;
    Iterator() = default;
    Iterator(const uint32_t* at, const FrameTable* table) : at_(at), table_(table) {}
    const Frame& operator*() const { return (*table_)[*at_]; }
    const Frame* operator->() const { return &**this; }
    Iterator& operator++() { return ++at_, *this; }
    Iterator& operator--() { return --at_, *this; }
    Iterator operator++(int) { return {at_++, table_}; }
    Iterator operator--(int) { return {at_--, table_}; }
    Iterator& operator+=(difference_type n) { return at_ += n, *this; }
    Iterator& operator-=(difference_type n) { return at_ -= n, *this; }
    Iterator operator+(difference_type n) const { return {at_ + n, table_}; }
    Iterator operator-(difference_type n) const { return {at_ - n, table_}; }
    friend Iterator operator+(difference_type n, Iterator i) { return i + n; }
    difference_type operator-(const Iterator& o) const { return at_ - o.at_; }
    const Frame& operator[](difference_type n) const { return *(*this + n); }
    auto operator<=>(const Iterator& o) const { return at_ <=> o.at_; }
    bool operator==(const Iterator& o) const { return at_ == o.at_; }

   private:
    const uint32_t* at_ = nullptr;
    const FrameTable* table_ = nullptr;
  };

  FrameView() = default;
  FrameView(std::span<const uint32_t> ids, const FrameTable* table) : ids_(ids), table_(table) {}

  Iterator begin() const { return {ids_.data(), table_}; }
  Iterator end() const { return {ids_.data() + ids_.size(), table_}; }
  auto rbegin() const { return std::reverse_iterator(end()); }
  auto rend() const { return std::reverse_iterator(begin()); }
  size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  const Frame& operator[](size_t i) const { return (*table_)[ids_[i]]; }
  const Frame& back() const { return (*this)[size() - 1]; }
  std::span<const uint32_t> ids() const { return ids_; }
  const FrameTable* table() const { return table_; }
  FrameView subview(size_t offset, size_t count) const {
    return {ids_.subspan(offset, count), table_};
  }

 private:
  std::span<const uint32_t> ids_;
  const FrameTable* table_ = nullptr;
};

// One distinct key of a report: its frames, leaf first (kernel, user, and
// off CPU the state's root frame; with --wakers the waker's above it), and
// what its samples add up to.
struct ProfileStack {
  SampleKey key;
  FrameView frames;
  SampleValues values;
};

// What the samples' counts are in.
enum class Unit : uint8_t {
  kSamples,       // samples, and intervals off CPU
  kMicroseconds,  // --weight time: periods and lengths
  kEvents,        // the periods of samples of an event the kernel adapts at -F, as perf weighs
};

// What a report over one or several recordings says in its header: the
// first one's event and host (other hosts appended), their samples,
// durations and losses added up.
struct RecordingSummary {
  std::string path;  // every input's, ", "-separated
  std::string writer_version;
  std::string hostname;
  std::string kernel_release;
  std::string machine;
  std::string event;
  uint64_t sample_frequency = 0;
  uint64_t sample_period = 0;
  // What one sample stands for in its event's unit (nanoseconds for a
  // clock), 0 when unknown: see sample_weight().
  uint64_t sample_weight = 0;
  bool clock_event = false;     // the event counts time (cpu-clock, task-clock)
  bool sample_periods = false;  // samples carry their periods (1.10): weights in events
  bool sampling = true;         // samples on CPU were taken
  std::string off_cpu;          // how switches were seen with --off-cpu; "" without
  uint32_t cpu_count = 0;
  uint64_t start_realtime_ns = 0;
  double duration_s = 0;
  double cpu_seconds = 0;                 // each recording's duration times its CPUs, added up
  uint64_t samples = 0;                   // what the sample filter kept
  uint64_t recorded_samples = 0;          // what the file holds of what the view shows
  uint64_t idle_samples = 0;              // of those, the idle task's, left out unasked
  uint64_t unviewed_samples = 0;          // on CPU, in the file, left out by --view
  uint64_t unviewed_intervals = 0;        // off CPU, likewise
  std::vector<format::LossCount> losses;  // totals by cause
  bool ended = true;                      // every recording has its end frame
  // Recordings of one host that overlap (Overlaps): what, and the samples
  // counted once that were in more than one.
  std::string overlap;
  uint64_t duplicate_samples = 0;
  std::string warning;  // damage, cuts
  // Why CPython processes were recorded without their Python frames: each
  // reason once, with how many processes it held for.
  std::vector<std::pair<std::string, uint32_t>> python_not_read;
};

// A report's stacks, ready to write.
struct Profile {
  RecordingSummary summary;
  Unit unit = Unit::kSamples;
  std::vector<std::string> names;  // by SampleKey::comm and SampleKey::cgroup
  std::shared_ptr<FrameTable> frames = std::make_shared<FrameTable>();
  std::vector<ProfileStack> stacks;

  const std::string& comm(const SampleKey& key) const { return names[key.comm]; }
  const std::string& cgroup(const SampleKey& key) const { return names[key.cgroup]; }
};

// Samples (or units) per reason a stack has unnamed frames for, each
// stack counted once per reason, most first.
std::vector<std::pair<UnnamedReason, uint64_t>> unnamed_by_reason(
    std::span<const ProfileStack> stacks);

}  // namespace ebprof::report
