#include "report/symbolizer.h"

#include "format/lookup.h"

namespace ebprof::report {

std::vector<SymbolizedStack> symbolize(const Profile& profile) {
  KernelSymbolizer kernel(profile.kernel_symbols);
  UserSymbolizer user(profile.embedded_symbols, profile.jit_symbols);
  std::vector<SymbolizedStack> out;
  out.reserve(profile.counts.size());
  for (const StackCount& c : profile.counts) {
    auto stack_it = profile.stacks.find(c.stack_id);
    auto comm_it = profile.comms.find(c.comm_id);
    std::span<const format::ProcessInfo> captures;
    if (auto it = profile.processes.find(c.pid); it != profile.processes.end())
      captures = std::span(it->second).subspan(c.capture);

    // An id defined in a damaged frame the reader skipped.
    SymbolizedStack s{
        c.pid, comm_it == profile.comms.end() ? "[lost]" : comm_it->second, c.count, {}};
    if (stack_it == profile.stacks.end()) {
      s.frames.push_back(Frame{"[unknown] (stack lost in a damaged frame)", "[unknown]"});
      out.push_back(std::move(s));
      continue;
    }
    const format::Stack& stack = stack_it->second;
    s.frames.reserve(stack.kernel.size() + stack.user.size());
    for (size_t i = 0; i < stack.kernel.size(); ++i)
      s.frames.push_back(kernel.resolve(format::lookup_address(stack.kernel, i)));
    for (size_t i = 0; i < stack.user.size(); ++i)
      s.frames.push_back(
          user.resolve(captures, stack.user[i], format::lookup_address(stack.user, i)));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace ebprof::report
