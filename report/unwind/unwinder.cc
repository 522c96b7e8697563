#include "report/unwind/unwinder.h"

#include "report/unwind/address_space.h"

namespace ebprof::report {
namespace {

// Where the walk ran out of window (or of call frame information), the
// recorded frame-pointer chain may go on: from the frame where both saw
// the same return address, never from a guess, and only if it has more
// (a chain that ends there too leaves the walk's reason standing).
void splice(UnwoundStack& u, std::span<const uint64_t> chain) {
  if ((u.end != UnnamedReason::kWindowTooSmall && u.end != UnnamedReason::kNoCfi) || u.pcs.empty())
    return;
  for (size_t j = u.pcs.size() == 1 ? 0 : 1; j + 1 < chain.size(); ++j)
    if (chain[j] == u.pcs.back()) {
      u.pcs.insert(u.pcs.end(), chain.begin() + j + 1, chain.end());
      u.spliced = true;
      u.end = UnnamedReason::kNone;
      return;
    }
}

}  // namespace

Unwinder::Unwinder(FileFinder& files) : files_(files) {}

Unwinder::~Unwinder() = default;

AddressSpace& Unwinder::space(const Recording& r, const StackRef& ref) {
  const SpaceKey key{ref.source, ref.pid, ref.capture};
  if (auto it = space_index_.find(key); it != space_index_.end()) {
    spaces_.splice(spaces_.begin(), spaces_, it->second);
    return *it->second->second;
  }
  if (spaces_.size() >= kMaxSpaces) {
    space_index_.erase(spaces_.back().first);
    spaces_.pop_back();
  }
  spaces_.emplace_front(
      key, std::make_unique<AddressSpace>(r, captures_from(r, ref), files_, cfi_files_));
  space_index_[key] = spaces_.begin();
  return *spaces_.front().second;
}

const UnwoundStack& Unwinder::unwind(const Recording& r, const StackRef& ref) {
  if (auto it = results_.find(ref); it != results_.end())
    return *it->second;
  UnwoundStack u;
  if (const format::UserWindow* window = r.windows.find(ref.window)) {
    u = space(r, ref).unwind(r, *window);
    if (auto stack = r.stacks.find(ref.stack); stack != r.stacks.end())
      splice(u, stack->second.user);
  } else {
    u.end = UnnamedReason::kUnreadableStack;  // lost with a damaged frame
  }
  return keep(ref, std::move(u));
}

const UnwoundStack& Unwinder::keep(const StackRef& ref, UnwoundStack u) {
  StackRef outcome = ref;
  outcome.window = kNoWindow;
  size_t h = StackRefHash{}(outcome);
  for (uint64_t v : {uint64_t(u.end), uint64_t(u.spliced), uint64_t(u.pcs.size())})
    h = hash_combine(h, v);
  for (uint64_t pc : u.pcs)
    h = hash_combine(h, pc);
  auto [it, inserted] = outcome_by_hash_.try_emplace(h, static_cast<uint32_t>(outcomes_.size()));
  const UnwoundStack* same = inserted ? nullptr : &outcomes_[it->second];
  // A hash shared by a different outcome (or by the same frames of
  // another address space or recorded stack, which the hash covers but
  // the comparison cannot see) keeps its own id.
  if (same && same->pcs == u.pcs && same->end == u.end && same->spliced == u.spliced &&
      outcome_refs_[same->id] == outcome)
    return *(results_[ref] = same);
  u.id = static_cast<uint32_t>(outcomes_.size());
  u.window = ref.window;
  outcomes_.push_back(std::move(u));
  outcome_refs_.push_back(outcome);
  return *(results_[ref] = &outcomes_.back());
}

UnwindCounts count_unwinding(const Recording& r, Unwinder& unwinder) {
  UnwindCounts counts;
  for (const auto& [key, values] : r.counts) {
    if (key.stack.window == kNoWindow)
      continue;
    const UnwoundStack& u = unwinder.unwind(r, key.stack);
    if (u.end != UnnamedReason::kNone)
      counts.cut[u.end] += values.count;
    else
      (u.spliced ? counts.spliced : counts.full) += values.count;
  }
  return counts;
}

}  // namespace ebprof::report
