#pragma once

// How much memory a report may take. A recording decides what a report
// builds (a crafted one, or one far larger than usual, can ask for more
// than the machine has), and past the machine's memory the kernel's OOM
// killer ends the report with no word, or takes another process. Below a
// budget, an allocation that would pass it fails instead, and the report
// stops with one line that names the budget.

#include <cstdint>

namespace ebprof::report {

// Three quarters of this machine's memory: room for the rest of it.
uint64_t default_memory_budget();

// Whether a budget can hold in this build: not under AddressSanitizer,
// whose shadow memory is terabytes of the very mappings RLIMIT_DATA counts.
bool memory_budget_holds();

// Makes allocations past `bytes` of the process's data (heap and private
// writable mappings: RLIMIT_DATA) fail, for as long as the returned
// object lives; a hard limit set by the caller's shell stays in force.
class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t bytes);
  ~MemoryBudget() { lift(); }
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  uint64_t bytes() const { return bytes_; }
  // Gives back what the budget held back: to say, with memory to say it
  // in, that it ran out.
  void lift();

 private:
  uint64_t bytes_;
  uint64_t previous_ = 0;  // the soft limit before
  bool set_ = false;
};

}  // namespace ebprof::report
