#include "report/symbolize/symbolizer.h"

#include "format/lookup.h"
#include "report/symbolize/kernel_names.h"

namespace ebprof::report {

Symbolizer::Symbolizer(SymbolizeOptions options, std::shared_ptr<FrameTable> table)
    : options_(std::move(options)),
      files_(options_),
      user_(options_, files_),
      unwinder_(files_),
      table_(std::move(table)) {}

namespace {

ProcessSymbols process_symbols(const Recording& recording, const StackRef& ref) {
  auto jit = recording.jit_symbols.find(ref.pid);
  return {captures_from(recording, ref),
          jit == recording.jit_symbols.end() ? nullptr : &jit->second,
          recording.embedded_symbols.get()};
}

}  // namespace

void Symbolizer::prepare(const Recording& recording, const StackRef& ref) {
  if (ref.stack == kNoStack || prefetch_budget_ == 0)
    return;
  std::span<const uint64_t> pcs;
  if (ref.window != kNoWindow) {
    const UnwoundStack& u = unwinder_.unwind(recording, ref);
    if (!prefetched_outcomes_.insert(u.id).second)
      return;
    pcs = u.pcs;
  } else {
    const format::Stack* stack = recording.stacks.find(ref.stack);
    if (!stack || !prefetched_stacks_.insert(ref).second)
      return;
    pcs = stack->user;
    // Beside a copied stack, the frame-pointer chain is what frame
    // pointers gave in code built without them: past the sampled address,
    // mostly not addresses at all.
    if (recording.info.call_graph == format::CallGraph::kDwarf)
      pcs = pcs.first(std::min<size_t>(pcs.size(), 1));
  }
  const ProcessSymbols space = process_symbols(recording, ref);
  for (size_t i = 0; i < pcs.size() && prefetch_budget_ > 0; ++i, --prefetch_budget_)
    user_.prefetch(space, format::lookup_address(pcs, i));
}

FrameView Symbolizer::stack(const Recording& recording, const StackRef& ref) {
  FrameView* view = nullptr;
  bool inserted = false;
  if (ref.window == kNoWindow) {
    auto [it, made] = cache_.try_emplace(ref);
    view = &it->second, inserted = made;
  } else {
    auto [it, made] = unwound_.try_emplace(unwinder_.unwind(recording, ref).id);
    view = &it->second, inserted = made;
  }
  if (inserted)
    *view = FrameView(table_->keep(name(recording, ref)), table_.get());
  return *view;
}

const std::vector<uint32_t>& Symbolizer::frames_at(const Recording& recording, const StackRef& ref,
                                                   bool kernel, uint64_t address, uint64_t lookup) {
  // Kernel addresses name alike in every process of a recording.
  const AddressKey key{recording.index, kernel ? UINT32_MAX : ref.pid,
                       kernel ? UINT32_MAX : ref.capture, address, lookup};
  auto [it, inserted] = frames_at_.try_emplace(key);
  if (!inserted)
    return it->second;
  std::vector<Frame> frames;
  if (kernel)
    frames.push_back(name_kernel_address(recording.kernel_symbols,
                                         recording.info.kernel_addresses_hidden, address, lookup));
  else
    user_.name(process_symbols(recording, ref), address, lookup, frames);
  for (Frame& f : frames)
    it->second.push_back(table_->intern(std::move(f)));
  return it->second;
}

std::vector<uint32_t> Symbolizer::name(const Recording& recording, const StackRef& ref) {
  const format::Stack* found = recording.stacks.find(ref.stack);
  if (!found) {
    // An id defined in a damaged frame the reader skipped.
    return {table_->intern(Frame{.reason = UnnamedReason::kStackLost, .module = "[unknown]"})};
  }
  const format::Stack& stack = *found;
  std::vector<uint32_t> ids;
  ids.reserve(stack.kernel.size() + stack.user.size());
  auto add = [&](bool kernel, std::span<const uint64_t> pcs) {
    for (size_t i = 0; i < pcs.size(); ++i) {
      const std::vector<uint32_t>& at =
          frames_at(recording, ref, kernel, pcs[i], format::lookup_address(pcs, i));
      ids.insert(ids.end(), at.begin(), at.end());
    }
  };
  add(true, stack.kernel);
  if (ref.window == kNoWindow) {
    add(false, stack.user);
    // A walk cut at the most frames a sample holds: a root that says so,
    // or the shares of the outer frames would be silently wrong.
    if (stack.user.size() >= format::kMaxStackFrames)
      ids.push_back(table_->intern(Frame{.kind = FrameKind::kStackEnd,
                                         .reason = UnnamedReason::kStackTruncated,
                                         .module = "[truncated]"}));
    return ids;
  }
  // --call-graph dwarf: the user frames unwound from the window, and when
  // the walk stopped short, a root frame that says why.
  const UnwoundStack& u = unwinder_.unwind(recording, ref);
  add(false, u.pcs);
  if (u.end != UnnamedReason::kNone)
    ids.push_back(table_->intern(Frame{.kind = FrameKind::kStackEnd,
                                       .reason = u.end,
                                       .offset = recording.info.user_stack_bytes,
                                       .module = "[truncated]"}));
  return ids;
}

}  // namespace ebprof::report
