#include "report/profile.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/error.h"
#include "format/lookup.h"
#include "format/losses.h"
#include "format/reader.h"
#include "report/text.h"

namespace ebprof::report {
namespace {

class ProfileBuilder : public format::RecordingVisitor {
 public:
  ProfileBuilder(std::vector<Profile>& sources, const SampleFilter* filter)
      : sources_(sources), filter_(filter) {
    sources_.emplace_back();
  }

  // The reader says which source each frame belongs to; every frame of a
  // source lands in its profile (ScriptWriter follows the same index).
  void on_frame(const format::FrameInfo& frame) override {
    while (sources_.size() <= frame.source) {
      sources_.emplace_back();
      index_.clear();
    }
    Profile& p = p_();
    auto it = std::find_if(p.sections.begin(), p.sections.end(),
                           [&](const Profile::Section& s) { return s.kind == frame.kind; });
    if (it == p.sections.end())
      it = p.sections.insert(p.sections.end(), Profile::Section{frame.kind});
    ++it->frames;
    it->stored_bytes += frame.stored_size + 16;  // with the frame header
    it->raw_bytes += frame.raw_size;
  }
  void on_info(format::RecordingInfo&& info) override { p_().info = std::move(info); }
  void on_source(format::Source&& source) override { p_().source = std::move(source); }
  void on_kernel_symbols(std::vector<format::KernelSymbol>&& symbols) override {
    std::move(symbols.begin(), symbols.end(), std::back_inserter(p_().kernel_symbols));
  }
  void on_process(format::ProcessInfo&& process) override {
    auto& captures = p_().processes[process.pid];
    // Append only: samples already counted keep their capture index. The
    // recorder writes captures in time order; one out of order is dropped.
    if (!captures.empty() && process.captured_at_ns < captures.back().captured_at_ns)
      return;
    format::sort_by_start(process.mappings);
    captures.push_back(std::move(process));
  }
  void on_samples(format::SampleBatch&& batch) override {
    Profile& p = p_();
    const uint64_t period = sample_weight(p.info);
    const View view = view_of(filter_, p.info);
    for (size_t i = 0; i < batch.stacks.size(); ++i)
      p.stacks.emplace(batch.first_stack_id + i, std::move(batch.stacks[i]));
    for (size_t i = 0; i < batch.comms.size(); ++i)
      p.comms.emplace(batch.first_comm_id + i, std::move(batch.comms[i]));
    for (const format::Sample& s : batch.samples) {
      // What --view leaves out is not part of this report at all: no
      // "filtered" in the header for intervals of an on-CPU view.
      if (!in_view(view, s))
        continue;
      ++p.recorded_samples;
      // The comm is looked up only when the filter names some: this runs
      // for every sample.
      if (filter_) {
        auto comm = filter_->comms.empty() ? p.comms.end() : p.comms.find(s.comm_id);
        if (!keeps(*filter_, s, comm == p.comms.end() ? kLostComm : comm->second,
                   p.info.start_monotonic_ns))
          continue;
      }
      const bool on_cpu = s.blocked_ns == 0;
      const bool woken = s.waker_stack_id != format::kNoWaker;
      Key key{s.pid,
              s.tid,
              s.cpu,
              capture_at(p, s.pid, s.time_ns),
              s.comm_id,
              s.stack_id,
              on_cpu ? kOnCpu : static_cast<uint8_t>(s.state),
              woken ? s.waker_pid : 0,
              woken ? capture_at(p, s.waker_pid, s.time_ns) : 0,
              woken ? s.waker_comm_id : 0,
              s.waker_stack_id};
      auto [it, inserted] = index_.try_emplace(key, p.counts.size());
      if (inserted)
        p.counts.push_back({key.pid, key.tid, key.cpu, key.capture, key.comm_id, key.stack_id,
                            key.off_cpu, key.waker_pid, key.waker_capture, key.waker_comm_id,
                            key.waker_stack_id});
      StackCount& c = p.counts[it->second];
      ++c.count;
      // Saturated: a hostile length must not wrap a sum around.
      if (__builtin_add_overflow(c.time_ns, on_cpu ? period : s.blocked_ns, &c.time_ns))
        c.time_ns = UINT64_MAX;
      ++p.total_samples;
      p.last_sample_ns = std::max(p.last_sample_ns, s.time_ns);
    }
  }
  void on_end(format::RecordingEnd&& end) override { p_().end = std::move(end); }
  void on_losses(format::Losses&& losses) override {
    p_().loss_reports.push_back(std::move(losses));
  }
  void on_elf_symbols(format::EmbeddedSymbols&& e) override {
    // A binary's symbols arrive over several frames, as samples reach them.
    auto [it, inserted] = embedded_.try_emplace(e.build_id, std::move(e));
    if (!inserted)
      it->second.symbols.insert(it->second.symbols.end(), e.symbols.begin(), e.symbols.end());
  }

  void on_jit_symbols(format::JitSymbols&& j) override {
    auto& symbols = p_().jit_symbols[j.pid];
    symbols.insert(symbols.end(), j.symbols.begin(), j.symbols.end());
  }

  void finish() {
    for (Profile& p : sources_) {
      // Stable: at an address reused for new code, the name written last wins.
      for (auto& [pid, symbols] : p.jit_symbols)
        std::stable_sort(symbols.begin(), symbols.end(),
                         [](const auto& a, const auto& b) { return a.address < b.address; });
    }
    // Keyed by build-id, whichever source brought them: built once, shared.
    auto tables = std::make_shared<EmbeddedTables>();
    for (auto& [id, e] : embedded_)
      tables->try_emplace(id, ElfIdentity{id, ""}, std::move(e.segments), std::move(e.symbols));
    for (Profile& p : sources_)
      p.embedded_symbols = tables;
  }

 private:
  struct Key {
    uint32_t pid, tid;
    uint16_t cpu;
    uint32_t capture, comm_id, stack_id;
    uint8_t off_cpu;
    uint32_t waker_pid, waker_capture, waker_comm_id, waker_stack_id;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = k.pid;
      for (uint64_t v : {uint64_t(k.tid), uint64_t(k.cpu), uint64_t(k.capture), uint64_t(k.comm_id),
                         uint64_t(k.stack_id), uint64_t(k.off_cpu), uint64_t(k.waker_pid),
                         uint64_t(k.waker_stack_id)})
        h = (h ^ v) * 0x9e3779b97f4a7c15ull;
      return h ^ (h >> 32);
    }
  };

  Profile& p_() { return sources_.back(); }

  std::vector<Profile>& sources_;
  const SampleFilter* filter_;
  std::unordered_map<Key, size_t, KeyHash> index_;
  std::unordered_map<std::string, format::EmbeddedSymbols> embedded_;
};

}  // namespace

std::vector<Profile> load_profiles(const std::string& path, const SampleFilter* filter) {
  std::vector<Profile> sources;
  ProfileBuilder builder(sources, filter);
  format::ReadResult result = format::read_recording(path, builder);
  builder.finish();
  for (Profile& p : sources) {
    p.path = path;
    p.version_major = result.version_major;
    p.version_minor = result.version_minor;
  }
  // Where the file is damaged or cut, said once: the reader tells the file's
  // story, not a source's, and the last source is where reading stopped.
  sources.back().warning = result.warning;
  return sources;
}

Profile load_profile(const std::string& path, const SampleFilter* filter) {
  std::vector<Profile> sources = load_profiles(path, filter);
  if (sources.size() > 1)
    throw Error(path + " is a merged file of " + std::to_string(sources.size()) +
                " recordings: this command reads one recording at a time");
  return std::move(sources.front());
}

void share_embedded_symbols(std::span<Profile> profiles) {
  std::set<const EmbeddedTables*> distinct;
  for (const Profile& p : profiles)
    distinct.insert(p.embedded_symbols.get());
  if (distinct.size() < 2)
    return;
  std::unordered_map<std::string, std::vector<ElfSymbol>> symbols;
  std::unordered_map<std::string, std::vector<LoadSegment>> segments;
  for (const EmbeddedTables* tables : distinct)
    for (const auto& [id, table] : *tables) {
      symbols[id].insert(symbols[id].end(), table.symbols().begin(), table.symbols().end());
      if (segments[id].empty())
        segments[id] = table.segments();
    }
  auto shared = std::make_shared<EmbeddedTables>();
  for (auto& [id, list] : symbols)
    shared->try_emplace(id, ElfIdentity{id, ""}, std::move(segments[id]), std::move(list));
  for (Profile& p : profiles)
    p.embedded_symbols = shared;
}

Profile summary_of(std::span<const Profile> profiles) {
  Profile s;
  s.info = profiles.front().info;
  s.info.hostname.clear();
  std::vector<format::LossCount> losses;
  uint64_t duration_ns = 0, task_events_lost = 0;
  bool ended = true;
  std::set<std::string> hosts, paths;
  // Each distinct name once, in order of appearance.
  auto add = [](std::set<std::string>& seen, std::string& list, const std::string& name) {
    if (seen.insert(name).second)
      list += (list.empty() ? "" : ", ") + name;
  };
  for (const Profile& p : profiles) {
    add(hosts, s.info.hostname, p.info.hostname);
    add(paths, s.path, p.path);
    s.total_samples += p.total_samples;
    s.recorded_samples += p.recorded_samples;
    duration_ns += static_cast<uint64_t>(duration_s(p) * 1e9);
    std::vector<format::LossCount> l = loss_totals(p);
    losses.insert(losses.end(), l.begin(), l.end());
    ended &= p.end.has_value();
    task_events_lost += p.end ? p.end->task_events_lost : 0;
    if (!p.warning.empty())
      s.warning += (s.warning.empty() ? "" : "; ") + p.warning;
  }
  // The durations add up: the summary's end is that far after its start.
  s.last_sample_ns = s.info.start_monotonic_ns + duration_ns;
  // Every source's loss totals, whether or not it ended: loss_totals() of
  // the summary reads them from its end frame, or else from its reports.
  if (ended)
    s.end =
        format::RecordingEnd{s.last_sample_ns, format::totals_by_cause(losses), task_events_lost};
  else
    s.loss_reports.push_back(format::Losses{s.last_sample_ns, format::totals_by_cause(losses)});
  s.version_major = profiles.front().version_major;
  s.version_minor = profiles.front().version_minor;
  return s;
}

View view_of(const SampleFilter* filter, const format::RecordingInfo& info) {
  return filter && filter->view ? *filter->view : info.sampling ? View::kOnCpu : View::kOffCpu;
}

const char* state_name(uint8_t off_cpu) {
  static constexpr const char* kStates[format::kBlockStates] = {
      "R preempted", "S sleeping", "D uninterruptible", "I idle", "other"};
  if (off_cpu == kOnCpu)
    return "on CPU";
  return off_cpu < format::kBlockStates ? kStates[off_cpu] : "unknown state";
}

uint32_t capture_at(const Profile& p, uint32_t pid, uint64_t time_ns) {
  auto it = p.processes.find(pid);
  if (it == p.processes.end())
    return 0;
  const auto& captures = it->second;
  auto after = std::upper_bound(
      captures.begin(), captures.end(), time_ns,
      [](uint64_t t, const format::ProcessInfo& c) { return t < c.captured_at_ns; });
  return after == captures.begin() ? 0 : static_cast<uint32_t>(after - captures.begin() - 1);
}

const format::Mapping* find_mapping(std::span<const format::ProcessInfo> captures,
                                    uint64_t address) {
  for (const auto& capture : captures)
    if (const format::Mapping* m = format::find_mapping(capture.mappings, address))
      return m;
  return nullptr;
}

bool is_clock_event(const std::string& event) {
  return event == "cpu-clock" || event == "task-clock";
}

uint64_t sample_weight(const format::RecordingInfo& info) {
  if (info.sample_period)
    return info.sample_period;
  return info.sample_frequency && is_clock_event(info.event) ? 1'000'000'000 / info.sample_frequency
                                                             : 0;
}

std::string describe_rate(const format::RecordingInfo& info) {
  if (info.sample_period == 1)
    return "on every event";
  return info.sample_period ? "every " + std::to_string(info.sample_period) + " events"
                            : "at " + std::to_string(info.sample_frequency) + " Hz";
}

std::vector<format::LossCount> loss_totals(const Profile& p) {
  if (p.end)
    return p.end->losses;
  std::vector<format::LossCount> all;
  for (const format::Losses& report : p.loss_reports)
    all.insert(all.end(), report.counts.begin(), report.counts.end());
  return format::totals_by_cause(all);
}

std::string describe_losses(const Profile& p, bool sample_kept) {
  uint64_t lost = 0;
  std::string causes;
  for (const auto& l : loss_totals(p)) {
    if (l.count == 0 || l.sample_kept != sample_kept)
      continue;
    lost += l.count;
    causes += (causes.empty() ? "" : ", ") + l.cause + ": " + std::to_string(l.count);
  }
  return lost ? std::to_string(lost) + " (" + causes + ")" : "0";
}

std::string describe_loss_spread(const Profile& p) {
  std::map<uint16_t, uint64_t> by_cpu;
  uint64_t first = 0, last = 0;
  for (const format::Losses& report : p.loss_reports)
    for (const format::LossCount& l : report.counts) {
      if (l.sample_kept)
        continue;
      by_cpu[l.cpu] += l.count;
      first = first ? first : report.time_ns;
      last = report.time_ns;
    }
  std::string out;
  for (const auto& [cpu, count] : by_cpu)
    out += (out.empty() ? "" : ", ") +
           (cpu == format::kNoCpu ? std::string("recorder") : "cpu " + std::to_string(cpu)) + ": " +
           std::to_string(count);
  if (out.empty())
    return out;
  const uint64_t start = p.info.start_monotonic_ns;
  return out + format("; reported from %.2f s to %.2f s", first > start ? (first - start) / 1e9 : 0,
                      last > start ? (last - start) / 1e9 : 0);
}

double duration_s(const Profile& p) {
  uint64_t end = p.end ? p.end->end_monotonic_ns : p.last_sample_ns;
  return end > p.info.start_monotonic_ns ? (end - p.info.start_monotonic_ns) / 1e9 : 0;
}

}  // namespace ebprof::report
