#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/contents.h"

namespace ebprof::record {

// Text symbols (types t, T, w, W) of /proc/kallsyms-formatted `text`, sorted
// by address, without sizes. Malformed lines are skipped.
std::vector<format::KernelSymbol> parse_kallsyms(std::string_view text);

// Loaded modules' names and address ranges, from /proc/modules text (no
// build-ids).
std::vector<format::KernelModule> parse_proc_modules(std::string_view text);

// The GNU build-id in a blob of ELF notes (/sys/kernel/notes,
// /sys/module/NAME/notes/.note.gnu.build-id); empty when there is none.
std::string parse_build_id_note(std::string_view notes);

// What identifies the running kernel's code: its image's build-id and each
// loaded module with its range and build-id, so that a report elsewhere can
// find the matching debuginfo. What cannot be read stays empty.
struct KernelIdentity {
  std::string build_id;
  std::vector<format::KernelModule> modules;
};
KernelIdentity read_kernel_identity();

// Gives every symbol a size that ends where the next symbol starts, and never
// past the end of the code it belongs to: its module's range, or _etext for
// the kernel image. Symbols of pseudo-modules (bpf, ftrace trampolines) and
// of the image past _etext are capped at kMaxUnboundedSymbol, since nothing
// bounds them: an address beyond that is unknown rather than misnamed.
inline constexpr uint64_t kMaxUnboundedSymbol = 4096;
void bound_kernel_symbols(std::vector<format::KernelSymbol>& symbols,
                          const std::vector<format::KernelModule>& modules);

// True when every address is zero: kernel.kptr_restrict hides them from us.
bool kallsyms_hidden(const std::vector<format::KernelSymbol>& symbols);

// /proc/kallsyms, bounded with the loaded modules' ranges (none on kernels
// without loadable modules).
std::vector<format::KernelSymbol> read_kallsyms(const std::vector<format::KernelModule>& modules);

// The kernel's symbols, handed out as samples need them: each symbol that
// covers a sampled address is returned once, so the recording embeds the
// few hundred symbols samples use instead of the whole table.
class KernelSymbolIndex {
 public:
  explicit KernelSymbolIndex(std::vector<format::KernelSymbol> symbols);
  // Appends to `out` the symbols that `stack` (leaf first: the interrupted
  // IP, then return addresses, looked up at address - 1 as the report does)
  // needs and that were not handed out yet.
  void take_new(std::span<const uint64_t> stack, std::vector<format::KernelSymbol>& out);
  // Every symbol new again: a new file (--switch-output) holds its own.
  void forget_taken() { taken_.assign(taken_.size(), false); }

  // The symbol `name`, or null: looked up once, by name, for from().
  const format::KernelSymbol* find(std::string_view name) const;

  // `stack` from its first frame in `function` on, or all of it when no
  // frame is (or `function` is null): an off-CPU stack without the tracing
  // glue (BPF program, bpf_trace_run, perf_trace_*) above __schedule(),
  // which differs by hook and kernel. Address comparisons only: it runs
  // for every interval.
  static std::span<const uint64_t> from(std::span<const uint64_t> stack,
                                        const format::KernelSymbol* function);

 private:
  std::vector<format::KernelSymbol> symbols_;  // ascending, bounded
  std::vector<bool> taken_;
};

}  // namespace ebprof::record
