#include "report/symbolizer.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "format/lookup.h"
#include "report/text.h"

namespace ebprof::report {

Symbolizer::Symbolizer(const Profile& profile, SymbolizeOptions options)
    : profile_(profile),
      kernel_(profile.kernel_symbols, profile.info.kernel_addresses_hidden),
      owned_(std::make_unique<UserSymbolizer>(*profile.embedded_symbols, profile.jit_symbols,
                                              std::move(options))),
      user_(owned_.get()) {}

Symbolizer::Symbolizer(const Profile& profile, UserSymbolizer& user)
    : profile_(profile),
      kernel_(profile.kernel_symbols, profile.info.kernel_addresses_hidden),
      user_(&user) {}

const Frames& Symbolizer::frames(uint32_t pid, uint32_t capture, uint32_t stack_id) {
  auto [it, inserted] = cache_.try_emplace(Key{pid, capture, stack_id});
  if (inserted)
    it->second = resolve(pid, capture, stack_id);
  return it->second;
}

std::vector<Frame> Symbolizer::resolve(uint32_t pid, uint32_t capture, uint32_t stack_id) {
  std::vector<Frame> frames;
  auto stack_it = profile_.stacks.find(stack_id);
  if (stack_it == profile_.stacks.end()) {
    // An id defined in a damaged frame the reader skipped.
    frames.push_back(Frame{"[unknown] (stack lost in a damaged frame)", "[unknown]"});
    frames.back().reason = "stack lost in a damaged frame";
    return frames;
  }
  std::span<const format::ProcessInfo> captures;
  if (auto p = profile_.processes.find(pid); p != profile_.processes.end())
    captures = std::span(p->second).subspan(std::min<size_t>(capture, p->second.size()));
  const format::Stack& stack = stack_it->second;
  frames.reserve(stack.kernel.size() + stack.user.size());
  for (size_t i = 0; i < stack.kernel.size(); ++i)
    frames.push_back(kernel_.resolve(stack.kernel[i], format::lookup_address(stack.kernel, i)));
  user_->use_jit(profile_.jit_symbols);
  for (size_t i = 0; i < stack.user.size(); ++i)
    user_->resolve_all(captures, stack.user[i], format::lookup_address(stack.user, i), frames);
  return frames;
}

std::vector<std::pair<std::string, uint64_t>> unnamed_by_reason(
    const std::vector<SymbolizedStack>& stacks) {
  std::map<std::string, uint64_t> samples;
  for (const SymbolizedStack& s : stacks) {
    std::set<std::string> reasons;
    for (const Frame& f : s.frames)
      if (!f.resolved && !f.reason.empty())
        reasons.insert(f.reason);
    for (const std::string& r : reasons)
      samples[r] += s.count;
  }
  std::vector<std::pair<std::string, uint64_t>> out(samples.begin(), samples.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::string describe_unnamed(const std::vector<std::pair<std::string, uint64_t>>& unnamed,
                             uint64_t total, const char* unit) {
  std::string out;
  for (const auto& [reason, samples] : unnamed)
    out += (out.empty() ? "" : ", ") + reason + " in " + std::to_string(samples) + " " + unit +
           " (" + format("%.1f%%", total ? 100.0 * samples / total : 0) + ")";
  return out.empty() ? "none" : out;
}

namespace {

Frame off_cpu_frame(uint8_t state) {
  Frame f{std::string("[off-cpu: ") + state_name(state) + "]", "[off-cpu]", false, true};
  f.system_name = f.name;
  return f;
}

// Who woke a blocked thread, above its stack as offwaketime draws it: root
// first, the blocked stack, "--", then the waker's stack leaf first and its
// comm last (so, in this leaf-first list, the comm first).
void add_waker(const Profile& profile, Symbolizer& symbolizer, const StackCount& c,
               std::vector<Frame>& frames) {
  auto comm = profile.comms.find(c.waker_comm_id);
  std::vector<Frame> top{
      Frame{comm == profile.comms.end() ? kLostComm : comm->second, "[waker]", false, true}};
  const Frames& waker = symbolizer.frames(c.waker_pid, c.waker_capture, c.waker_stack_id);
  top.insert(top.end(), waker.rbegin(), waker.rend());
  top.push_back(Frame{"--", "[waker]", false, true});
  frames.insert(frames.begin(), top.begin(), top.end());
}

// One profile's stacks appended to `out`, through `symbolizer`.
void symbolize_into(const Profile& profile, Symbolizer& symbolizer, bool per_thread, bool wakers,
                    std::vector<SymbolizedStack>& out) {
  // What a stack looks like, threads and CPUs aside: process, capture,
  // comm, stack, off-CPU state, and the waker when shown.
  using Shape = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint8_t, uint32_t, uint32_t,
                           uint32_t, uint32_t>;
  std::map<Shape, size_t> merged;     // without threads and CPUs: its entry in `out`
  std::map<Shape, Frames> decorated;  // off CPU: its frames, built once, then shared
  out.reserve(out.size() + profile.counts.size());
  for (const StackCount& c : profile.counts) {
    const bool woken = wakers && c.waker_stack_id != format::kNoWaker;
    const Shape shape{c.pid,
                      c.capture,
                      c.comm_id,
                      c.stack_id,
                      c.off_cpu,
                      woken ? c.waker_pid : 0,
                      woken ? c.waker_capture : 0,
                      woken ? c.waker_comm_id : 0,
                      woken ? c.waker_stack_id : format::kNoWaker};
    if (!per_thread) {
      auto [it, inserted] = merged.try_emplace(shape, out.size());
      if (!inserted) {
        out[it->second].count += c.count;
        out[it->second].time_ns += c.time_ns;
        continue;
      }
    }
    Frames frames = symbolizer.frames(c.pid, c.capture, c.stack_id);
    if (c.off_cpu != kOnCpu) {
      // Blocked stacks get their state as the root frame, so that folded
      // output, pprof and flame graphs show them apart from running ones.
      auto [it, fresh] = decorated.try_emplace(shape);
      if (fresh) {
        std::vector<Frame> with_state = frames.get();
        with_state.push_back(off_cpu_frame(c.off_cpu));
        if (woken)
          add_waker(profile, symbolizer, c, with_state);
        it->second = std::move(with_state);
      }
      frames = it->second;
    }
    auto comm_it = profile.comms.find(c.comm_id);
    out.push_back({c.pid, per_thread ? c.tid : 0, per_thread ? c.cpu : uint16_t{0},
                   comm_it == profile.comms.end() ? kLostComm : comm_it->second, c.count,
                   std::move(frames), c.time_ns, c.off_cpu});
  }
}

}  // namespace

std::vector<SymbolizedStack> symbolize(const Profile& profile, SymbolizeOptions options,
                                       bool per_thread) {
  return symbolize(std::span(&profile, 1), std::move(options), per_thread);
}

std::vector<SymbolizedStack> symbolize(std::span<const Profile> profiles, SymbolizeOptions options,
                                       bool per_thread) {
  std::vector<SymbolizedStack> out;
  if (profiles.empty())
    return out;
  const bool wakers = options.wakers;
  UserSymbolizer user(*profiles.front().embedded_symbols, profiles.front().jit_symbols,
                      std::move(options));
  for (const Profile& p : profiles) {
    Symbolizer symbolizer(p, user);
    symbolize_into(p, symbolizer, per_thread, wakers, out);
  }
  return out;
}

}  // namespace ebprof::report
