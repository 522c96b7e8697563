#include "report/resolve/stack_resolver.h"

#include "common/error.h"
#include "format/lookup.h"

namespace ebprof::report {

void StackResolver::add(std::unique_ptr<Unwinder> unwinder) {
  unwinders_.push_back(std::move(unwinder));
}

Unwinder& StackResolver::unwinder_for(const Recording& r) {
  if (chosen_.size() <= r.index)
    chosen_.resize(r.index + 1, nullptr);
  Unwinder*& chosen = chosen_[r.index];
  for (size_t i = 0; !chosen && i < unwinders_.size(); ++i)
    if (unwinders_[i]->unwinds(r.info))
      chosen = unwinders_[i].get();
  if (!chosen)
    throw Error("internal: no unwinder for the native frames of " + r.path);
  return *chosen;
}

void StackResolver::settle(const Recording& r, const IdRuns<format::UserWindow>& windows,
                           std::span<StackRef> refs) {
  unwinder_for(r).settle(r, windows, refs);
  for (const StackRef& ref : refs)
    prepare(r, ref);
}

void StackResolver::prepare(const Recording& r, const StackRef& ref) {
  if (ref.stack == kNoStack)
    return;
  const UnwoundStack native = unwinder_for(r).unwind(r, ref);
  if (!prepared_.insert(native.stands_for).second)
    return;
  for (size_t i = 0; i < native.pcs.size(); ++i)
    symbolizer_.prefetch(r, ref, format::lookup_address(native.pcs, i));
}

FrameView StackResolver::stack(const Recording& r, const StackRef& ref) {
  const UnwoundStack native = unwinder_for(r).unwind(r, ref);
  auto [it, inserted] = named_.try_emplace(native.stands_for);
  if (inserted)
    it->second = FrameView(table().keep(name(r, ref, native)), &table());
  return it->second;
}

std::vector<uint32_t> StackResolver::name(const Recording& r, const StackRef& ref,
                                          const UnwoundStack& native) {
  const format::Stack* stack = r.stacks.find(ref.stack);
  if (!stack) {
    // An id defined in a damaged frame the reader skipped.
    return {table().intern(Frame{.reason = UnnamedReason::kStackLost, .module = "[unknown]"})};
  }
  std::vector<uint32_t> ids;
  ids.reserve(stack->kernel.size() + native.pcs.size() + 1);
  auto add = [&](FrameKind kind, std::span<const uint64_t> pcs) {
    for (size_t i = 0; i < pcs.size(); ++i) {
      const std::vector<uint32_t>& at =
          symbolizer_.frames_at(r, ref, kind, pcs[i], format::lookup_address(pcs, i));
      ids.insert(ids.end(), at.begin(), at.end());
    }
  };
  add(FrameKind::kKernel, stack->kernel);
  const std::span<const format::ProcessInfo> captures = captures_from(r, ref);
  if (stack->python.empty() || captures.empty() || captures.front().python.eval_end == 0) {
    add(FrameKind::kNative, native.pcs);
  } else {
    merge_python(r, ref, *stack, captures, native, ids);
    if (native.end != UnnamedReason::kNone && !native.from_window)
      return ids;  // the native frames' end was dropped with them
  }
  if (native.end != UnnamedReason::kNone)
    ids.push_back(table().intern(Frame{.kind = FrameKind::kStackEnd,
                                       .reason = native.end,
                                       .offset = native.window_bytes,
                                       .module = "[truncated]"}));
  return ids;
}

void StackResolver::merge_python(const Recording& r, const StackRef& ref,
                                 const format::Stack& stack,
                                 std::span<const format::ProcessInfo> captures,
                                 const UnwoundStack& native, std::vector<uint32_t>& ids) {
  const format::PythonRuntime& py = captures.front().python;
  const auto in_eval = [&](uint64_t pc) { return pc >= py.eval_start && pc < py.eval_end; };
  const auto add_native = [&](size_t i) {
    const std::vector<uint32_t>& at = symbolizer_.frames_at(
        r, ref, FrameKind::kNative, native.pcs[i], format::lookup_address(native.pcs, i));
    ids.insert(ids.end(), at.begin(), at.end());
  };
  size_t next = 0;  // the next Python frame, innermost first
  const auto add_python = [&](bool to_entry) {
    while (next < stack.python_frames()) {
      const format::PythonFrame f = stack.python_frame_at(next++);
      ids.push_back(symbolizer_.python_frame(r, ref, f));
      if (to_entry && f.entry)
        break;
    }
  };
  if (native.from_window) {
    // Unwound with CFI, the native frames are whole: each activation of
    // the eval loop ran the Python frames up to its entry frame.
    for (size_t i = 0; i < native.pcs.size(); ++i) {
      if (in_eval(native.pcs[i]) && next < stack.python_frames())
        add_python(true);
      else
        add_native(i);
    }
    add_python(false);  // frames the native walk ended short of
    end_python(stack, ids);
    return;
  }
  // The frame-pointer walk breaks in an interpreter built without frame
  // pointers: what it found above the innermost Python frame (the C code
  // Python called, up to the interpreter's first function or the first
  // word outside every mapping) hangs under the Python frames, which
  // reach the root; the rest is dropped.
  for (size_t i = 0; i < native.pcs.size() && !in_eval(native.pcs[i]); ++i) {
    const format::Mapping* m = mapping_in(captures, native.pcs[i]);
    if (!m && i > 0)
      break;  // a word of the broken walk, not a return address
    add_native(i);
    if (m && m->build_id == py.build_id)
      break;
  }
  add_python(false);
  end_python(stack, ids);
}

void StackResolver::end_python(const format::Stack& stack, std::vector<uint32_t>& ids) {
  // A walk that stopped short (a frame unreadable, not a code object, too
  // deep) must not look like a stack that reached its first frame.
  if (stack.python_end != format::PythonEnd::kComplete)
    ids.push_back(table().intern(Frame{.kind = FrameKind::kStackEnd,
                                       .reason = UnnamedReason::kPythonWalkCut,
                                       .module = "[truncated]"}));
}

UnwindCounts StackResolver::count_unwinding(const Recording& r) {
  UnwindCounts counts;
  Unwinder& unwinder = unwinder_for(r);
  for (const auto& [key, values] : r.counts) {
    const UnwoundStack u = unwinder.unwind(r, key.stack);
    if (!u.from_window)
      continue;
    if (u.end != UnnamedReason::kNone)
      counts.cut[u.end] += values.count;
    else
      (u.spliced ? counts.spliced : counts.full) += values.count;
  }
  return counts;
}

}  // namespace ebprof::report
