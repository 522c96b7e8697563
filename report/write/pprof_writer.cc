#include "report/write/pprof_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>

#include "common/error.h"
#include "common/text.h"
#include "report/pprof.pb.h"
#include "report/write/frame_text.h"

namespace ebprof::report {
namespace {

namespace pp = perftools::profiles;

// pprof drops a trailing "(...)" from names as if it were a parameter list:
// "[unknown] (libc.so.6+0x2724a, binary not found)" would show as
// "[unknown]". Unnamed frames keep their where and why without parentheses.
std::string display_name(const Frame& f) {
  std::string name = frame_name(f);
  if (f.named() || !name.starts_with("[unknown] (") || !name.ends_with(")"))
    return name;
  return "[unknown] " + name.substr(11, name.size() - 12);
}

class Builder {
 public:
  int64_t str(const std::string& s) {
    auto [it, inserted] = strings_.try_emplace(s, static_cast<int64_t>(strings_.size()));
    if (inserted)
      p_.add_string_table(valid_utf8(s));
    return it->second;
  }

  void value_type(pp::ValueType* v, const char* type, const char* unit) {
    v->set_type(str(type));
    v->set_unit(str(unit));
  }

  uint64_t mapping(const Frame& f) {
    const std::string& file = f.path.empty() ? f.module : f.path;
    auto [it, inserted] = mappings_.try_emplace({file, f.build_id}, mappings_.size() + 1);
    if (inserted) {
      pp::Mapping* m = p_.add_mapping();
      m->set_id(it->second);
      // Addresses are file offsets (kernel and JIT: addresses), so one
      // mapping serves a binary in every process, whatever its load address.
      m->set_memory_start(0);
      m->set_memory_limit(UINT64_MAX);
      m->set_filename(str(file));
      m->set_build_id(str(f.build_id.empty() ? "" : hex_bytes(f.build_id)));
      m->set_has_functions(true);
      m->set_has_line_numbers(f.line > 0);
      m->set_has_inline_frames(true);
    }
    return it->second;
  }

  uint64_t function(const Frame& f) {
    const std::string name = display_name(f);
    const std::string& system = f.system_name.empty() ? name : f.system_name;
    auto [it, inserted] = functions_.try_emplace({name, system, f.file}, functions_.size() + 1);
    if (inserted) {
      pp::Function* fn = p_.add_function();
      fn->set_id(it->second);
      fn->set_name(str(name));
      fn->set_system_name(str(system));
      fn->set_filename(str(f.file));
    }
    return it->second;
  }

  // One location for an address: `frames` are the functions inlined there,
  // innermost first, then the one they are inlined into, as pprof's lines.
  uint64_t location(const FrameView& frames) {
    const Frame& f = frames.back();
    const uint64_t mapping_id = mapping(f);
    std::string names;
    for (const Frame& inlined : frames)
      names += frame_name(inlined) + '\n' + std::to_string(inlined.line) + '\n';
    auto [it, inserted] =
        locations_.try_emplace({mapping_id, f.file_offset, names}, locations_.size() + 1);
    if (inserted) {
      pp::Location* loc = p_.add_location();
      loc->set_id(it->second);
      loc->set_mapping_id(mapping_id);
      loc->set_address(f.file_offset);
      for (const Frame& each : frames) {
        pp::Line* line = loc->add_line();
        line->set_function_id(function(each));
        line->set_line(each.line);
      }
    }
    return it->second;
  }

  pp::Profile& profile() { return p_; }

 private:
  pp::Profile p_;
  std::unordered_map<std::string, int64_t> strings_;
  std::map<std::pair<std::string, std::string>, uint64_t> mappings_;
  std::map<std::tuple<uint64_t, uint64_t, std::string>, uint64_t> locations_;
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> functions_;
};

// RFC 1952 gzip, as pprof files are.
std::string gzip(const std::string& bytes) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("zlib cannot start compressing");
  std::string out(deflateBound(&zs, bytes.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END)
    throw Error("zlib could not compress the profile");
  return out;
}

// Rounded, and saturated rather than overflowed: a hostile count must not
// wrap around.
int64_t saturated(double v) {
  return std::fabs(v) < 9.2e18 ? std::llround(v) : v < 0 ? INT64_MIN : INT64_MAX;
}

// Stacks to write, their counts multiplied by `factor` (negative for the
// base of a diff); `side` labels them when set.
struct Side {
  const Profile& profile;
  double factor = 1;
  const char* side = nullptr;
  PprofLabels labels;
};

// Which values every sample carries, besides its count.
struct Values {
  // The samples carry their weight in the event's unit: time for a clock,
  // events for a period (-c, probes, or each sample's own since 1.10).
  bool weighed = false;
  bool off_cpu = false;  // intervals off CPU weigh their length, in a type of their own
};

// The profile's header: sample types, period, times, comment.
Values describe(Builder& b, const RecordingSummary& info, std::span<const Side> sides) {
  pp::Profile& p = b.profile();
  const bool clock = info.clock_event;
  // --off-cpu-only took no samples: its event is no event.
  Values v{info.sampling && (info.sample_weight || info.sample_periods)};
  b.value_type(p.add_sample_type(), "samples", "count");
  if (v.weighed) {
    b.value_type(p.add_sample_type(), clock ? "cpu" : info.event.c_str(),
                 clock ? "nanoseconds" : "count");
    b.value_type(p.mutable_period_type(), clock ? "cpu" : info.event.c_str(),
                 clock ? "nanoseconds" : "count");
    // A fixed period; at -F the kernel adapts another event's from sample to sample.
    p.set_period(static_cast<int64_t>(std::min<uint64_t>(info.sample_weight, INT64_MAX)));
  }
  // pprof shows the last type first, so -top ranks where time went.
  for (const Side& side : sides)
    for (const ProfileStack& s : side.profile.stacks)
      v.off_cpu |= s.key.state != ThreadState::kOnCpu;
  if (v.off_cpu)
    b.value_type(p.add_sample_type(), "off_cpu", "nanoseconds");
  p.set_time_nanos(static_cast<int64_t>(info.start_realtime_ns));
  // A damaged or hostile header can make these absurd: saturate, never
  // overflow.
  const double duration_ns = info.duration_s * 1e9;
  p.set_duration_nanos(duration_ns < 9.2e18 ? static_cast<int64_t>(duration_ns) : INT64_MAX);
  p.add_comment(b.str("recorded by ebprof " + info.writer_version + " on " + info.hostname +
                      " (Linux " + info.kernel_release + "), " + info.event + " " +
                      describe_rate(info)));
  return v;
}

// pprof takes the first mapping for the profile's main binary: in the
// heaviest stack, the user frame at the lowest address is the best guess
// (executables load below shared libraries, PIE or not).
void add_main_binary(Builder& b, const Profile& profile) {
  const ProfileStack* heaviest = nullptr;
  for (const ProfileStack& s : profile.stacks)
    if (!heaviest || s.values.count > heaviest->values.count)
      heaviest = &s;
  const Frame* main_binary = nullptr;
  if (heaviest)
    for (const Frame& f : heaviest->frames)
      if (!f.kernel() && !f.path.empty() && (!main_binary || f.address < main_binary->address))
        main_binary = &f;
  if (main_binary)
    b.mapping(*main_binary);
}

void add_locations(Builder& b, const FrameView& frames, pp::Sample* sample) {
  for (size_t at = 0; at < frames.size();) {
    // The inlined frames at one address, and their container; a broken
    // DWARF chain (no container) never reaches into the next address.
    size_t n = 1;
    while (at + n < frames.size() && frames[at + n - 1].kind == FrameKind::kInlined &&
           frames[at + n].address == frames[at].address)
      ++n;
    sample->add_location_id(b.location(frames.subview(at, n)));
    at += n;
  }
}

void add_samples(Builder& b, const Side& side, const Values& v) {
  const int64_t pid_key = b.str("pid"), tid_key = b.str("tid"), comm_key = b.str("comm"),
                cpu_key = b.str("cpu"), cgroup_key = b.str("cgroup"), side_key = b.str("side");
  for (const ProfileStack& s : side.profile.stacks) {
    pp::Sample* sample = b.profile().add_sample();
    add_locations(b, s.frames, sample);
    const double scaled = static_cast<double>(s.values.count) * side.factor;
    const bool on_cpu = s.key.state == ThreadState::kOnCpu;
    sample->add_value(saturated(scaled));
    // Unrounded: a diff's base, scaled down, keeps its long tail in the
    // weighed value, where whole samples would round to 0.
    const int64_t weight = saturated(static_cast<double>(s.values.weight) * side.factor);
    if (v.weighed)
      sample->add_value(on_cpu ? weight : 0);
    if (v.off_cpu)
      sample->add_value(on_cpu ? 0 : weight);
    auto label = [&](int64_t key) {
      pp::Label* l = sample->add_label();
      l->set_key(key);
      return l;
    };
    if (side.labels.pid)
      label(pid_key)->set_num(s.key.stack.pid);
    if (side.labels.tid)
      label(tid_key)->set_num(s.key.tid);
    // A string: pprof drops numeric labels whose value is 0, and cpu 0 is
    // as real as any other.
    if (side.labels.cpu)
      label(cpu_key)->set_str(b.str(std::to_string(s.key.cpu)));
    if (side.labels.comm)
      label(comm_key)->set_str(b.str(side.profile.comm(s.key)));
    if (side.labels.cgroup && !side.profile.cgroup(s.key).empty())
      label(cgroup_key)->set_str(b.str(side.profile.cgroup(s.key)));
    if (side.side)
      label(side_key)->set_str(b.str(side.side));
  }
}

void write_profile(std::ostream& out, const RecordingSummary& info, std::span<const Side> sides) {
  Builder b;
  b.str("");  // string_table[0] is always ""
  const Values values = describe(b, info, sides);
  add_main_binary(b, sides.front().profile);
  for (const Side& side : sides)
    add_samples(b, side, values);
  std::string bytes;
  if (!b.profile().SerializeToString(&bytes))
    throw Error(
        "the pprof profile is too large to encode (protobuf's 2 GB limit): narrow it with "
        "--pid, --time or --comm, or use --format folded");
  out << gzip(bytes);
}

}  // namespace

void write_pprof(std::ostream& out, const Profile& profile, PprofLabels labels) {
  const Side all[] = {{profile, 1, nullptr, labels}};
  write_profile(out, profile.summary, all);
}

void write_pprof_diff(std::ostream& out, const Profile& base, double base_in_new,
                      const Profile& now) {
  const Side sides[] = {{now, 1, "new"}, {base, -base_in_new, "base"}};
  write_profile(out, now.summary, sides);
}

}  // namespace ebprof::report
