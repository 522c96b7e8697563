#include "report/aggregate/aggregate.h"

#include <limits>
#include <unordered_map>

#include "report/load/summary.h"

namespace ebprof::report {
namespace {

constexpr size_t kDropped = std::numeric_limits<size_t>::max();

// Who woke a blocked thread, above its stack: root first, the blocked
// stack, a separator, then the waker's stack leaf first and its comm last
// (so, in this leaf-first list, the comm first).
void add_waker(const Recording& r, const SampleKey& key, const NameTable& names,
               StackResolver& resolver, std::vector<uint32_t>& ids) {
  FrameTable& table = resolver.table();
  std::vector<uint32_t> top{table.intern(Frame{
      .kind = FrameKind::kWakerComm, .name = names.all()[key.waker_comm], .module = "[waker]"})};
  const FrameView waker = resolver.stack(r, key.waker);
  top.insert(top.end(), waker.ids().rbegin(), waker.ids().rend());
  top.push_back(table.intern(Frame{.kind = FrameKind::kWakerSeparator, .module = "[waker]"}));
  ids.insert(ids.begin(), top.begin(), top.end());
}

}  // namespace

FrameView decorated_frames(const Recording& r, const SampleKey& key, const NameTable& names,
                           StackResolver& resolver) {
  const FrameView frames = resolver.stack(r, key.stack);
  if (key.state == ThreadState::kOnCpu)
    return frames;
  // Blocked stacks get their state as the root frame, so that folded
  // output, pprof and flame graphs show them apart from running ones.
  FrameTable& table = resolver.table();
  std::vector<uint32_t> ids(frames.ids().begin(), frames.ids().end());
  ids.push_back(table.intern(
      Frame{.kind = FrameKind::kOffCpuState, .state = key.state, .module = "[off-cpu]"}));
  if (key.waker.stack != kNoStack)
    add_waker(r, key, names, resolver, ids);
  return FrameView(table.keep(std::move(ids)), &table);
}

Profile aggregate(std::span<const Recording> recordings, const NameTable& names,
                  StackResolver& resolver, const AggregateOptions& options) {
  Profile p;
  p.summary = summarize(recordings);
  p.unit = options.unit;
  p.names = names.all();
  p.frames = resolver.shared_table();
  std::unordered_map<SampleKey, size_t, SampleKeyHash> index;  // into p.stacks, or kDropped
  // What a stack looks like, threads, CPUs and cgroups aside: decorated
  // and filtered once, then shared by every thread's, CPU's and cgroup's
  // entry.
  const Grouping shape{.threads = false, .wakers = options.grouping.wakers};
  std::unordered_map<SampleKey, std::optional<FrameView>, SampleKeyHash> shaped;
  // Every key before any name: the DWARF that names need opens on other
  // cores meanwhile.
  struct Keyed {
    const Recording* r;
    SampleKey key;
    SampleValues values;
  };
  std::vector<Keyed> keyed;
  for (const Recording& r : recordings)
    for (const auto& [recorded, values] : r.counts) {
      const SampleKey& key =
          keyed.emplace_back(Keyed{&r, options.grouping.apply(recorded), values}).key;
      resolver.prepare(r, key.stack);
      resolver.prepare(r, key.waker);
    }
  for (const auto& [rp, key, values] : keyed) {
    const Recording& r = *rp;
    auto [it, inserted] = index.try_emplace(key, kDropped);
    if (!inserted) {
      if (it->second != kDropped)
        p.stacks[it->second].values.add(values.count, values.weight);
      continue;
    }
    auto [frames, fresh] = shaped.try_emplace(shape.apply(key));
    if (fresh) {
      const FrameView all = decorated_frames(r, key, names, resolver);
      frames->second =
          options.filter ? filter_frames(*options.filter, all, *p.frames) : std::optional(all);
    }
    if (!frames->second)
      continue;
    it->second = p.stacks.size();
    p.stacks.push_back({key, *frames->second, values});
  }
  // Weighed by time or events: what each stack stands for becomes its count.
  for (ProfileStack& s : p.stacks)
    if (options.unit == Unit::kMicroseconds)
      s.values.count = (s.values.weight + 500) / 1000;
    else if (options.unit == Unit::kEvents)
      s.values.count = s.values.weight;
  return p;
}

}  // namespace ebprof::report
