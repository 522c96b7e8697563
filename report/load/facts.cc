#include "report/load/facts.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "report/load/summary.h"

namespace ebprof::report {
namespace {

// Stacks by content: each batch defines again the stacks its samples use
// (1.4 recorders), so ids count definitions.
size_t distinct_stacks(const Recording& r) {
  struct Hash {
    size_t operator()(const format::Stack* s) const {
      size_t h = s->kernel.size();
      for (const std::vector<uint64_t>* half : {&s->kernel, &s->user})
        for (uint64_t ip : *half)
          h = hash_combine(h, ip);
      return h;
    }
  };
  struct Equal {
    bool operator()(const format::Stack* a, const format::Stack* b) const { return *a == *b; }
  };
  std::unordered_set<const format::Stack*, Hash, Equal> seen;
  r.stacks.each([&](const format::Stack& s) { seen.insert(&s); });
  return seen.size();
}

// The binaries that sampled user frames fall in.
void count_sampled_binaries(const Recording& r, RecordingFacts& f) {
  std::set<std::string> ids, anonymous;
  for (const auto& [key, values] : r.counts) {
    std::span<const format::ProcessInfo> captures = captures_from(r, key.stack);
    const format::Stack* stack = r.stacks.find(key.stack.stack);
    if (captures.empty() || !stack)
      continue;  // never captured, or lost with a damaged frame
    for (uint64_t ip : stack->user) {
      const format::Mapping* m = mapping_in(captures, ip);
      if (m && m->path.starts_with("/"))
        (m->build_id.empty() ? anonymous.insert(m->path) : ids.insert(m->build_id));
    }
  }
  f.sampled_binaries = ids.size();
  f.sampled_without_build_id = anonymous.size();
  for (const auto& id : ids)
    f.sampled_with_embedded += r.embedded_symbols->count(id);
}

void count_dropped(const Recording& r, RecordingFacts& f) {
  uint64_t first = 0, last = 0;
  for (const format::Losses& report : r.loss_reports)
    for (const format::LossCount& l : report.counts) {
      if (l.sample_kept)
        continue;
      f.dropped_by_cpu[l.cpu] += l.count;
      first = first ? first : report.time_ns;
      last = report.time_ns;
    }
  const uint64_t start = r.info.start_monotonic_ns;
  f.dropped_from_s = first > start ? (first - start) / 1e9 : 0;
  f.dropped_to_s = last > start ? (last - start) / 1e9 : 0;
}

void count_python(const Recording& r, RecordingFacts& f) {
  for (const auto& [pid, captures] : r.processes)
    f.python_processes += std::any_of(captures.begin(), captures.end(), [](const auto& c) {
      return c.python.version != 0 && c.python.error.empty();
    });
  for (const auto& [pid, codes] : r.python_code)
    for (const auto& [address, at] : codes)
      f.python_code_objects += at.size();
  for (const auto& [key, values] : r.counts)
    if (const format::Stack* stack = r.stacks.find(key.stack.stack))
      f.python_walks[static_cast<size_t>(stack->python_end)] += values.count;
}

}  // namespace

RecordingFacts describe_recording(const Recording& r) {
  RecordingFacts f;
  f.summary = summarize(std::span(&r, 1));
  f.version_major = r.version_major;
  f.version_minor = r.version_minor;
  f.source_index = r.source.index;
  f.source_path = r.source.path;
  f.source_version_major = r.source.version_major;
  f.source_version_minor = r.source.version_minor;
  f.command_line = r.info.command_line;
  f.transport = r.info.transport;
  f.off_cpu_min_block_ns = r.info.off_cpu_min_block_ns;
  f.off_cpu_max_block_ns = r.info.off_cpu_max_block_ns;
  for (const auto& [key, values] : r.counts)
    if (key.state != ThreadState::kOnCpu) {
      f.off_cpu_intervals += values.count;
      f.off_cpu_ns += values.weight;
    }
  f.stacks = distinct_stacks(r);
  f.processes = r.processes.size();
  for (const auto& [pid, list] : r.processes) {
    f.captures += list.size();
    for (const auto& c : list)
      f.mappings += c.mappings.size();
  }
  count_dropped(r, f);
  f.task_events_lost = r.end ? r.end->task_events_lost : 0;
  f.kernel_build_id = r.info.kernel_build_id;
  f.kernel_modules = r.info.kernel_modules.size();
  for (const auto& m : r.info.kernel_modules)
    f.kernel_modules_with_build_id += !m.build_id.empty();
  f.kernel_symbols = r.kernel_symbols.size();
  f.kernel_addresses_hidden = r.info.kernel_addresses_hidden;
  f.embedded_binaries = r.embedded_symbols->size();
  for (const auto& [id, table] : *r.embedded_symbols)
    f.embedded_functions += table.size();
  count_sampled_binaries(r, f);
  count_python(r, f);
  f.sections = r.sections;
  if (r.info.call_graph == format::CallGraph::kDwarf) {
    f.user_stack_bytes = r.info.user_stack_bytes;
    f.windows = r.windows.size();
    f.window_bytes = r.blocks.bytes();
    f.embedded_cfi = r.embedded_cfi->size();
  }
  return f;
}

}  // namespace ebprof::report
