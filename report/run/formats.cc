#include "report/run/formats.h"

#include <algorithm>
#include <iterator>

#include "common/text.h"
#include "report/aggregate/diff.h"
#include "report/run/plan.h"
#include "report/write/diff_writer.h"
#include "report/write/flamegraph_writer.h"
#include "report/write/folded_writer.h"
#include "report/write/frame_text.h"
#include "report/write/pprof_writer.h"
#include "report/write/top_writer.h"

namespace ebprof::report {
namespace {

// Titled for what it shows: samples on CPU, intervals off it, or both
// (the wall view), how many, and over how long.
FlameOptions flame_options(const Profile& p) {
  const RecordingSummary& s = p.summary;
  bool on = false, off = false;
  for (const ProfileStack& stack : p.stacks)
    (stack.key.state == ThreadState::kOnCpu ? on : off) = true;
  const std::string what = off && on ? s.event + " and time off CPU"
                           : off     ? std::string("time off CPU")
                                     : s.event;
  const std::string counted =
      off && on ? count_of(s.samples, "sample or interval", "samples and intervals")
      : off     ? count_of(s.samples, "interval", "intervals")
                : count_of(s.samples, "sample", "samples");
  return {"Flame graph: " + what + " on " + s.hostname + ", " + utc_time(s.start_realtime_ns) +
              ": " + counted + string_printf(" over %.2f s", s.duration_s),
          false, unit_name(p.unit)};
}

FlameOptions diff_flame_options(const DiffProfile& d) {
  return {"Differential flame graph: " + d.base.path + " -> " + d.now.path, true,
          value_unit(d.normalize, d.unit)};
}

DiffProfile joined(const Profile& base, const Profile& now, const Plan& plan) {
  return join_profiles(base, now, plan.normalize, plan.join);
}

void top(std::ostream& out, const Profile& p, const Plan& plan) {
  write_top(out, p, plan.top);
}
void top_diff(std::ostream& out, const Profile& base, const Profile& now, const Plan& plan) {
  write_diff_top(out, joined(base, now, plan), plan.top.rows, plan.top.children);
}
void folded(std::ostream& out, const Profile& p, const Plan& plan) {
  write_folded(out, p, plan.folded);
}
void folded_diff(std::ostream& out, const Profile& base, const Profile& now, const Plan& plan) {
  write_diff_folded(out, joined(base, now, plan));
}
void pprof(std::ostream& out, const Profile& p, const Plan& plan) {
  write_pprof(out, p, plan.pprof_labels);
}
void pprof_diff(std::ostream& out, const Profile& base, const Profile& now, const Plan& plan) {
  write_pprof_diff(out, base, joined(base, now, plan).scale.base_in_new(), now);
}
void flamegraph(std::ostream& out, const Profile& p, const Plan&) {
  write_flamegraph_html(out, flame_stacks(p), flame_options(p));
}
void flamegraph_diff(std::ostream& out, const Profile& base, const Profile& now, const Plan& plan) {
  const DiffProfile d = joined(base, now, plan);
  write_flamegraph_html(out, flame_stacks(d), diff_flame_options(d));
}
void svg(std::ostream& out, const Profile& p, const Plan&) {
  write_flamegraph_svg(out, flame_stacks(p), flame_options(p));
}
void svg_diff(std::ostream& out, const Profile& base, const Profile& now, const Plan& plan) {
  const DiffProfile d = joined(base, now, plan);
  write_flamegraph_svg(out, flame_stacks(d), diff_flame_options(d));
}

constexpr FormatInfo kFormats[] = {
    {.format = OutputFormat::kTop,
     .name = "top",
     .help = "self and children per function, like perf report",
     .write = top,
     .write_diff = top_diff,
     .weighs_time = true,
     .shows_keys = ShowsKeys::kAsColumns,
     .call_tree = true,
     .redraws = true},
    {.format = OutputFormat::kFolded,
     .name = "folded",
     .help = "flamegraph.pl input",
     .write = folded,
     .write_diff = folded_diff,
     .weighs_time = true},
    {.format = OutputFormat::kScript,
     .name = "script",
     .help = "every sample, like perf script",
     .write = nullptr,
     .write_diff = nullptr,
     .weighs_time = false,
     .streams_samples = true},
    {.format = OutputFormat::kPprof,
     .name = "pprof",
     .help = "gzipped profile.proto for go tool pprof (use -o)",
     .write = pprof,
     .write_diff = pprof_diff,
     .weighs_time = false,
     .binary = true,
     .shows_keys = ShowsKeys::kAsLabels,
     .slice_extension = ".pb.gz"},
    {.format = OutputFormat::kFlamegraph,
     .name = "flamegraph",
     .help = "one self-contained interactive HTML page",
     .write = flamegraph,
     .write_diff = flamegraph_diff,
     .weighs_time = true},
    {.format = OutputFormat::kSvg,
     .name = "svg",
     .help = "a static flame graph image",
     .write = svg,
     .write_diff = svg_diff,
     .weighs_time = true},
};

}  // namespace

std::span<const FormatInfo> output_formats() {
  return kFormats;
}

const FormatInfo* find_format(std::string_view name) {
  auto it = std::find_if(std::begin(kFormats), std::end(kFormats),
                         [&](const FormatInfo& f) { return name == f.name; });
  return it == std::end(kFormats) ? nullptr : &*it;
}

}  // namespace ebprof::report
