#include "report/symbolizer.h"

#include "format/lookup.h"

namespace ebprof::report {

Symbolizer::Symbolizer(const Profile& profile)
    : profile_(profile),
      kernel_(profile.kernel_symbols),
      user_(profile.embedded_symbols, profile.jit_symbols) {}

const std::vector<Frame>& Symbolizer::frames(uint32_t pid, uint32_t capture, uint32_t stack_id) {
  auto [it, inserted] = cache_.try_emplace(Key{pid, capture, stack_id});
  std::vector<Frame>& frames = it->second;
  if (!inserted)
    return frames;
  auto stack_it = profile_.stacks.find(stack_id);
  if (stack_it == profile_.stacks.end()) {
    // An id defined in a damaged frame the reader skipped.
    frames.push_back(Frame{"[unknown] (stack lost in a damaged frame)", "[unknown]"});
    return frames;
  }
  std::span<const format::ProcessInfo> captures;
  if (auto p = profile_.processes.find(pid); p != profile_.processes.end())
    captures = std::span(p->second).subspan(std::min<size_t>(capture, p->second.size()));
  const format::Stack& stack = stack_it->second;
  frames.reserve(stack.kernel.size() + stack.user.size());
  for (size_t i = 0; i < stack.kernel.size(); ++i)
    frames.push_back(kernel_.resolve(stack.kernel[i], format::lookup_address(stack.kernel, i)));
  for (size_t i = 0; i < stack.user.size(); ++i)
    frames.push_back(user_.resolve(captures, stack.user[i], format::lookup_address(stack.user, i)));
  for (size_t i = 0; i < frames.size(); ++i) {
    frames[i].address =
        i < stack.kernel.size() ? stack.kernel[i] : stack.user[i - stack.kernel.size()];
    if (frames[i].kernel)
      frames[i].file_offset = frames[i].address;  // the kernel image is its own "file"
  }
  return frames;
}

std::vector<SymbolizedStack> symbolize(const Profile& profile) {
  Symbolizer symbolizer(profile);
  std::vector<SymbolizedStack> out;
  out.reserve(profile.counts.size());
  for (const StackCount& c : profile.counts) {
    auto comm_it = profile.comms.find(c.comm_id);
    out.push_back({c.pid, c.tid, c.cpu, comm_it == profile.comms.end() ? "[lost]" : comm_it->second,
                   c.count, symbolizer.frames(c.pid, c.capture, c.stack_id)});
  }
  return out;
}

}  // namespace ebprof::report
