#include "report/aggregate/diff.h"

#include <cinttypes>
#include <map>

#include "common/text.h"

namespace ebprof::report {
namespace {

// What a frame is matched by. Unnamed frames match by module alone: their
// offsets and reasons need not agree across recordings.
std::string frame_key(const Frame& f, Join join) {
  if (join == Join::kAddress && !f.kernel() && !f.build_id.empty())
    return hex_bytes(f.build_id) + string_printf("+%" PRIx64, f.file_offset);
  if (!f.named())
    return "[unknown] " + f.module;
  // A frame a report adds is told by what it stands for.
  if (f.synthetic())
    return f.name + '[' + std::to_string(static_cast<int>(f.kind)) + '/' +
           std::to_string(static_cast<int>(f.state)) + ']';
  return f.name;
}

std::string stack_key(const std::string& comm, const FrameView& frames, Join join) {
  std::string key = comm;
  for (const Frame& f : frames) {
    key += '\n';
    key += frame_key(f, join);
  }
  return key;
}

uint64_t total_of(const Profile& p) {
  uint64_t sum = 0;
  for (const ProfileStack& s : p.stacks)
    sum += s.values.count;
  return sum;
}

}  // namespace

double count_value(const RecordingSummary& side, uint64_t total, Normalize n) {
  switch (n) {
    case Normalize::kNone:
      return 1;
    case Normalize::kTotal:
      return total ? 100.0 / total : 0;
    case Normalize::kPerSecond:
      return side.duration_s > 0 ? 1 / side.duration_s : 0;
    case Normalize::kPerCpuSecond:
      // Samples are not seconds: a share of CPU time needs the rate.
      return side.cpu_seconds > 0 ? 1 / side.cpu_seconds : 0;
  }
  return 1;
}

DiffProfile join_profiles(const Profile& base, const Profile& now, Normalize normalize, Join join) {
  DiffProfile d{base.summary, now.summary, now.unit, normalize};
  d.scale = {count_value(base.summary, total_of(base), normalize),
             count_value(now.summary, total_of(now), normalize)};
  std::map<std::string, size_t> index;
  auto add = [&](const Profile& side, bool is_new) {
    for (const ProfileStack& s : side.stacks) {
      const std::string& comm = side.comm(s.key);
      auto [it, inserted] = index.try_emplace(stack_key(comm, s.frames, join), d.stacks.size());
      if (inserted)
        d.stacks.push_back({comm, s.frames});
      DiffStack& joined = d.stacks[it->second];
      (is_new ? joined.now : joined.base) += s.values.count;
      if (is_new)
        joined.frames = s.frames;  // names as the new recording has them
    }
  };
  add(base, false);
  add(now, true);
  return d;
}

}  // namespace ebprof::report
