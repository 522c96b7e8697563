#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/contents.h"

namespace ebprof::record {

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

// Symbols of pseudo-modules (bpf, ftrace trampolines) and of the image
// past _etext are capped at this size, since nothing bounds them: an
// address beyond that is unknown rather than misnamed.
inline constexpr uint64_t kMaxUnboundedSymbol = 4096;

// The kernel's symbols, handed out as samples need them: each symbol that
// covers a sampled address is returned once, so the recording embeds the
// few hundred symbols samples use instead of the whole table. The table
// (some 120,000 symbols) is held packed, its names in one buffer: 6 MB
// where strings in KernelSymbols took 14, for the whole recording.
class KernelSymbolIndex {
 public:
  KernelSymbolIndex() = default;
  // The text symbols (types t, T, w, W) of /proc/kallsyms-formatted
  // `text`, sorted by address; malformed lines are skipped. Each ends
  // where the next starts, and never past the end of the code it belongs
  // to: its module's range in `modules`, or _etext for the kernel image
  // (else kMaxUnboundedSymbol).
  explicit KernelSymbolIndex(std::string_view text,
                             std::span<const format::KernelModule> modules = {});
  // /proc/kallsyms, read a line at a time (it is 5 MB), bounded with the
  // loaded modules' ranges (none on kernels without loadable modules).
  static KernelSymbolIndex read(std::span<const format::KernelModule> modules);

  size_t size() const { return entries_.size(); }
  format::KernelSymbol symbol(size_t i) const;
  // True when every address is zero: kernel.kptr_restrict hides them from us.
  bool hidden() const;

  // Appends to `out` the symbols that `stack` (leaf first: the interrupted
  // IP, then return addresses, looked up at address - 1 as the report does)
  // needs and that were not handed out yet.
  void take_new(std::span<const uint64_t> stack, std::vector<format::KernelSymbol>& out);
  // Every symbol new again: a new file (--switch-output) holds its own.
  void forget_taken() { taken_.assign(taken_.size(), false); }

  // The symbol `name`, if there is one: looked up once, by name, for from().
  std::optional<format::KernelSymbol> find(std::string_view name) const;

  // `stack` from its first frame in `function` on, or all of it when no
  // frame is (or `function` is null): an off-CPU stack without the tracing
  // glue (BPF program, bpf_trace_run, perf_trace_*) above __schedule(),
  // which differs by hook and kernel. Address comparisons only: it runs
  // for every interval.
  static std::span<const uint64_t> from(std::span<const uint64_t> stack,
                                        const std::optional<format::KernelSymbol>& function);

 private:
  struct Entry {
    uint64_t address = 0;
    uint32_t size = 0;
    uint32_t name = 0;  // chunk of names_ << 16 | offset in it
    uint16_t name_size = 0;
    uint16_t module = 0;  // index in modules_; 0: the kernel image
  };
  std::string_view name(const Entry& e) const {
    return {names_[e.name >> 16].data() + (e.name & 0xffff), e.name_size};
  }
  void add(std::string_view line);
  // Sorts and bounds the symbols added.
  void finish(std::span<const format::KernelModule> modules);
  void bound(std::span<const format::KernelModule> modules);

  // Grown a block at a time, names a chunk at a time, never copied whole:
  // a vector's doubling would hold the old table and the new at once.
  std::deque<Entry> entries_;       // ascending, bounded
  std::vector<std::string> names_;  // chunks of kNameChunk bytes
  static constexpr size_t kNameChunk = 1 << 16;
  std::vector<std::string> modules_{""};
  std::vector<bool> taken_;
};

}  // namespace ebprof::record
