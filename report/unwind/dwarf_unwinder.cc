#include "report/unwind/dwarf_unwinder.h"

#include <algorithm>
#include <exception>
#include <numeric>
#include <thread>
#include <tuple>

#include "report/unwind/address_space.h"

namespace ebprof::report {
namespace {

// Where the walk ran out of window (or of call frame information), the
// recorded frame-pointer chain may go on: from the frame where both saw
// the same return address, never from a guess, and only if it has more
// (a chain that ends there too leaves the walk's reason standing).
void splice(Walk& w, std::span<const uint64_t> chain) {
  if ((w.end != UnnamedReason::kWindowTooSmall && w.end != UnnamedReason::kNoCfi) || w.pcs.empty())
    return;
  for (size_t j = w.pcs.size() == 1 ? 0 : 1; j + 1 < chain.size(); ++j)
    if (chain[j] == w.pcs.back()) {
      w.pcs.insert(w.pcs.end(), chain.begin() + j + 1, chain.end());
      w.spliced = true;
      w.end = UnnamedReason::kNone;
      return;
    }
}

StackRef without_window(StackRef ref) {
  ref.window = kNoWindow;
  return ref;
}

}  // namespace

DwarfUnwinder::DwarfUnwinder(FileFinder& files) : files_(files) {}

DwarfUnwinder::~DwarfUnwinder() = default;

SpaceCache::SpaceCache() = default;
SpaceCache::~SpaceCache() = default;

AddressSpace& SpaceCache::get(const Recording& r, const StackRef& ref, DwarfUnwinder& unwinder) {
  const Key key{ref.source, ref.pid, ref.capture};
  const size_t captures = captures_from(r, ref).size();
  const size_t pieces = r.embedded_cfi ? cfi_pieces(*r.embedded_cfi) : 0;
  if (auto it = index_.find(key); it != index_.end()) {
    spaces_.splice(spaces_.begin(), spaces_, it->second);
    Space& found = spaces_.front();
    if (found.captures != captures || found.cfi_pieces != pieces) {
      found.space = unwinder.make_space(r, ref);
      found.captures = captures;
      found.cfi_pieces = pieces;
    }
    return *found.space;
  }
  if (spaces_.size() >= kMaxSpaces) {
    index_.erase(spaces_.back().key);
    spaces_.pop_back();
  }
  spaces_.push_front({key, captures, pieces, unwinder.make_space(r, ref)});
  index_[key] = spaces_.begin();
  return *spaces_.front().space;
}

std::unique_ptr<AddressSpace> DwarfUnwinder::make_space(const Recording& r, const StackRef& ref) {
  std::lock_guard lock(making_);
  return std::make_unique<AddressSpace>(r, captures_from(r, ref), files_, cfi_files_);
}

Walk DwarfUnwinder::walk(SpaceCache& spaces, const Recording& r,
                         const IdRuns<format::UserWindow>& windows, const StackRef& ref) {
  Walk w;
  if (const format::UserWindow* window = windows.find(ref.window)) {
    w = spaces.get(r, ref, *this).unwind(r, *window);
    if (const format::Stack* stack = r.stacks.find(ref.stack))
      splice(w, stack->user);
  } else {
    w.end = UnnamedReason::kUnreadableStack;  // lost with a damaged frame
  }
  return w;
}

UnwoundStack DwarfUnwinder::view(const Recording& r, const Outcome& o) {
  return {.pcs = o.walk.pcs,
          .end = o.walk.end,
          .window_bytes = r.info.user_stack_bytes,
          .from_window = true,
          .spliced = o.walk.spliced,
          .stands_for = o.ref};
}

UnwoundStack DwarfUnwinder::unwind(const Recording& r, const StackRef& ref) {
  if (ref.window == kNoWindow)
    return chain_.unwind(r, ref);
  if (auto it = results_.find(ref); it != results_.end())
    return view(r, *it->second);
  Walk w = walk(spaces_, r, r.windows, ref);
  const size_t hash = outcome_hash(ref, w);
  return view(r, keep(ref, std::move(w), hash, true));
}

void DwarfUnwinder::settle(const Recording& r, const IdRuns<format::UserWindow>& windows,
                           std::span<StackRef> refs) {
  // What each ref unwinds to: known already, or walked below.
  std::vector<const Outcome*> outcome(refs.size(), nullptr);
  // The rest, in address-space order: each thread takes a contiguous
  // share, so that it meets few spaces; equal refs walk once.
  std::vector<uint32_t> pending;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (refs[i].window == kNoWindow)
      continue;
    if (auto it = results_.find(refs[i]); it != results_.end())
      outcome[i] = it->second;
    else
      pending.push_back(static_cast<uint32_t>(i));
  }
  auto key = [&](uint32_t i) {
    const StackRef& ref = refs[i];
    return std::tie(ref.source, ref.pid, ref.capture, ref.window, ref.stack);
  };
  std::stable_sort(pending.begin(), pending.end(),
                   [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  std::vector<uint32_t> walks;  // the first ref of each run of equal ones
  for (size_t k = 0; k < pending.size(); ++k)
    if (k == 0 || key(pending[k]) != key(pending[k - 1]))
      walks.push_back(pending[k]);
  // A thread costs an address space of its own per process it meets: worth
  // it for thousands of windows, not for a few.
  constexpr size_t kPerThread = 1000;
  const size_t threads = std::min<size_t>(
      {std::max(1u, std::thread::hardware_concurrency()), 4, walks.size() / kPerThread + 1});
  while (worker_spaces_.size() + 1 < threads)
    worker_spaces_.push_back(std::make_unique<SpaceCache>());
  std::vector<Walk> found(walks.size());
  std::vector<size_t> hashes(walks.size());
  std::vector<std::exception_ptr> failed(threads);
  auto share = [&](size_t t, SpaceCache& spaces) {
    try {
      for (size_t i = walks.size() * t / threads; i < walks.size() * (t + 1) / threads; ++i) {
        found[i] = walk(spaces, r, windows, refs[walks[i]]);
        hashes[i] = outcome_hash(refs[walks[i]], found[i]);
      }
    } catch (...) {
      failed[t] = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t)
    workers.emplace_back([&, t] { share(t, *worker_spaces_[t - 1]); });
  share(0, spaces_);
  for (std::thread& w : workers)
    w.join();
  for (const std::exception_ptr& e : failed)
    if (e)
      std::rethrow_exception(e);
  // Kept in the refs' own order: the outcomes one ref after the other
  // gives. Only a ref that stands for a new outcome is remembered, so that
  // what is kept grows with outcomes, not with windows.
  std::vector<uint32_t> by_ref(walks.size());
  std::iota(by_ref.begin(), by_ref.end(), 0);
  std::sort(by_ref.begin(), by_ref.end(),
            [&](uint32_t a, uint32_t b) { return walks[a] < walks[b]; });
  for (uint32_t i : by_ref)
    outcome[walks[i]] = &keep(refs[walks[i]], std::move(found[i]), hashes[i], false);
  for (size_t k = 1; k < pending.size(); ++k)
    if (!outcome[pending[k]])
      outcome[pending[k]] = outcome[pending[k - 1]];  // equal to the one before
  // Each ref becomes the one standing for its outcome.
  for (size_t i = 0; i < refs.size(); ++i)
    if (outcome[i])
      refs[i] = outcome[i]->ref;
}

size_t DwarfUnwinder::outcome_hash(const StackRef& ref, const Walk& w) {
  size_t h = StackRefHash{}(without_window(ref));
  for (uint64_t v : {uint64_t(w.end), uint64_t(w.spliced), uint64_t(w.pcs.size())})
    h = hash_combine(h, v);
  for (uint64_t pc : w.pcs)
    h = hash_combine(h, pc);
  return h;
}

const DwarfUnwinder::Outcome& DwarfUnwinder::keep(const StackRef& ref, Walk w, size_t hash,
                                                  bool remember) {
  auto [it, inserted] = outcome_by_hash_.try_emplace(hash, nullptr);
  const Outcome* same = it->second;
  // A hash shared by a different outcome (or by the same frames of
  // another address space or recorded stack, which the hash covers but
  // the comparison cannot see) keeps its own.
  if (same && same->walk.pcs == w.pcs && same->walk.end == w.end &&
      same->walk.spliced == w.spliced && without_window(same->ref) == without_window(ref)) {
    if (remember)
      results_[ref] = same;
    return *same;
  }
  const Outcome& made = outcomes_.emplace_back(Outcome{std::move(w), ref});
  if (inserted)
    it->second = &made;
  return *(results_[ref] = &made);  // it stands for the outcome
}

}  // namespace ebprof::report
