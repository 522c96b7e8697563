#pragma once

// What sample batches define with consecutive ids (user stack windows,
// stack blocks), kept as each batch brought it: one allocation per batch,
// not per item, found by a binary search over the batches. A batch that
// does not follow the last one is left out: the reader lets ids jump only
// forward (past a damaged frame), so only a crafted file has one.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ebprof::report {

namespace detail {

// The run of `runs` (ascending by .first) whose ids start at or before
// `id`, or null.
template <typename Run>
const Run* run_before(const std::vector<Run>& runs, uint32_t id) {
  auto after = std::upper_bound(runs.begin(), runs.end(), id,
                                [](uint32_t i, const Run& r) { return i < r.first; });
  return after == runs.begin() ? nullptr : &*(after - 1);
}

}  // namespace detail

template <typename T>
class IdRuns {
 public:
  // `items` have the ids first, first + 1, ...
  void add(uint32_t first, std::vector<T> items) {
    if (items.empty() || (!runs_.empty() && first < runs_.back().first + runs_.back().items.size()))
      return;
    size_ += items.size();
    runs_.push_back({first, std::move(items)});
  }
  const T* find(uint32_t id) const {
    const Run* run = detail::run_before(runs_, id);
    return run && id - run->first < run->items.size() ? &run->items[id - run->first] : nullptr;
  }
  // The items added, forgotten ones too.
  size_t size() const { return size_; }
  // Lets go of the runs whose ids all lie below `id`.
  void forget_before(uint32_t id) {
    auto kept = std::find_if(runs_.begin(), runs_.end(),
                             [&](const Run& r) { return r.first + r.items.size() > id; });
    runs_.erase(runs_.begin(), kept);
  }
  // Calls `f` with each item, in id order.
  template <typename F>
  void each(F&& f) const {
    for (const Run& run : runs_)
      for (const T& item : run.items)
        f(item);
  }

 private:
  struct Run {
    uint32_t first;
    std::vector<T> items;
  };
  std::vector<Run> runs_;
  size_t size_ = 0;
};

// Blocks of one size, each run's back to back in one string.
class BlockRuns {
 public:
  // `bytes` hold blocks first, first + 1, ... of `block_bytes` each (the
  // recording's; a run of another size is left out, as is a partial block
  // at the end).
  void add(uint32_t first, std::string bytes, uint32_t block_bytes) {
    if (runs_.empty())
      block_bytes_ = block_bytes;
    const size_t count = block_bytes_ ? bytes.size() / block_bytes_ : 0;
    if (count == 0 || block_bytes != block_bytes_ ||
        (!runs_.empty() && first < runs_.back().first + runs_.back().count))
      return;
    bytes_ += count * block_bytes_;
    runs_.push_back({first, count, std::move(bytes)});
  }
  // The block's bytes (block_bytes() of them), or null.
  const char* find(uint32_t id) const {
    const Run* run = detail::run_before(runs_, id);
    return run && id - run->first < run->count
               ? run->bytes.data() + uint64_t{id - run->first} * block_bytes_
               : nullptr;
  }
  uint32_t block_bytes() const { return block_bytes_; }
  size_t bytes() const { return bytes_; }

 private:
  struct Run {
    uint32_t first;
    size_t count;
    std::string bytes;
  };
  uint32_t block_bytes_ = 0;
  std::vector<Run> runs_;
  size_t bytes_ = 0;
};

}  // namespace ebprof::report
