// The unwind stage: a window's bytes, libdwfl unwinding a stack this test
// copies of itself (through the binary's own CFI, and through the copy a
// recording embeds), splicing, and hostile windows.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>

#include "common/elf_file.h"
#include "fake_processes.h"
#include "record/cfi_embedder.h"
#include "record/proc_maps.h"
#include "report/load/recording.h"
#include "report/locate/file_finder.h"
#include "report/unwind/address_space.h"
#include "report/unwind/dwarf_unwinder.h"
#include "report/unwind/frame_pointer_unwinder.h"

namespace ebprof::report {
namespace {

constexpr uint32_t kBlock = 128;

// A recording holding one window of `stack` (from `base` up) with
// registers rip, rsp, rbp as `regs`, and the maps of `process`.
Recording no_windows() {
  Recording r;
  r.info.call_graph = format::CallGraph::kDwarf;
  r.info.stack_block_bytes = kBlock;
  r.info.user_registers = {16, 7, 6};
  r.info.user_stack_bytes = 8192;
  r.stacks.add(0, {format::Stack{}});
  return r;
}

// Adds the window of `stack` at `base` to `r`, each block new; its id.
uint32_t add_window(Recording& r, uint32_t id, uint64_t base, const std::vector<uint8_t>& stack,
                    std::vector<uint64_t> regs) {
  format::UserWindow w{std::move(regs), base, static_cast<uint32_t>(stack.size()),
                       format::UserAbi::k64};
  std::string blocks;
  const auto first = static_cast<uint32_t>(r.blocks.bytes() / kBlock);
  for (uint64_t at = base / kBlock * kBlock; at < base + stack.size(); at += kBlock) {
    std::string block(kBlock, '\0');
    for (uint64_t a = std::max(at, base); a < std::min(at + kBlock, base + stack.size()); ++a)
      block[a - at] = static_cast<char>(stack[a - base]);
    w.blocks.push_back(first + static_cast<uint32_t>(blocks.size() / kBlock));
    blocks += block;
  }
  r.blocks.add(first, std::move(blocks), kBlock);
  r.windows.add(id, {std::move(w)});
  return id;
}

Recording one_window(uint64_t base, const std::vector<uint8_t>& stack, std::vector<uint64_t> regs,
                     format::ProcessInfo process = {}) {
  Recording r = no_windows();
  add_window(r, 0, base, stack, std::move(regs));
  process.pid = 7;
  r.processes[7].push_back(std::move(process));
  return r;
}

TEST(Window, ReadsAcrossBlocksAndNothingOutside) {
  std::vector<uint8_t> bytes(300);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i);
  const uint64_t base = 0x7fff0000 + 100;  // not block-aligned
  Recording r = one_window(base, bytes, {0, base, 0});
  const format::UserWindow& w = *r.windows.find(0);
  uint8_t out[40];
  ASSERT_TRUE(read_window(r, w, base + 20, out, sizeof out));  // crosses a block boundary
  for (size_t i = 0; i < sizeof out; ++i)
    EXPECT_EQ(out[i], static_cast<uint8_t>(20 + i));
  EXPECT_FALSE(read_window(r, w, base - 8, out, 8));
  EXPECT_FALSE(read_window(r, w, base + 296, out, 8));
  EXPECT_FALSE(read_window(r, w, UINT64_MAX - 4, out, 8));
  format::UserWindow lost = w;
  lost.blocks[1] = 99;  // a block a damaged frame lost
  EXPECT_FALSE(read_window(r, lost, base + 20, out, sizeof out));
}

// What a sample of this very test would record: its registers and stack.
struct Capture {
  uint64_t rip = 0, rsp = 0, rbp = 0;
  std::vector<uint8_t> stack;
  void (*leaf)(Capture&) = nullptr;  // what level2 calls; capture_here if unset
};

void capture_here(Capture& c);

__attribute__((noinline)) void level2(Capture& c) {
  (c.leaf ? c.leaf : capture_here)(c);
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void level1(Capture& c) {
  level2(c);
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void capture_here(Capture& c) {
  asm volatile(
      "lea 0(%%rip), %0\n\t"
      "mov %%rsp, %1\n\t"
      "mov %%rbp, %2"
      : "=r"(c.rip), "=r"(c.rsp), "=r"(c.rbp));
  c.stack.resize(4096);
  std::memcpy(c.stack.data(), reinterpret_cast<const void*>(c.rsp), c.stack.size());
}

// A leaf that keeps rbx in the red zone, below its stack pointer, as GCC's
// leaves may, and copies its stack from there up to `end`: unwinding it
// reads below the window, which stops nothing.
struct RedZoneCapture {
  uint64_t rip, rsp;
  uint8_t* to;
  uint64_t end;
};
extern "C" void red_zone_capture(RedZoneCapture* c);
asm(R"(
  .text
  .type red_zone_capture, @function
red_zone_capture:
  .cfi_startproc
  mov %rbx, -16(%rsp)
  .cfi_offset %rbx, -24
1:
  lea 1b(%rip), %rax
  mov %rax, (%rdi)
  mov %rsp, 8(%rdi)
  mov 24(%rdi), %rcx
  sub %rsp, %rcx
  mov 16(%rdi), %rax
  mov %rsp, %rsi
  mov %rax, %rdi
  rep movsb
  ret
  .cfi_endproc
  .size red_zone_capture, .-red_zone_capture
)");

// The top of this thread's stack (the tests run on the main thread).
uint64_t stack_top() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.ends_with("[stack]"))
      return std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
  return 0;
}

// All of the stack, for the walk to reach _start.
void capture_with_red_zone(Capture& c) {
  uint64_t here;
  asm volatile("mov %%rsp, %0" : "=r"(here));
  const uint64_t top = stack_top();
  if (top <= here)
    return;
  c.stack.resize(top - here + 4096);
  RedZoneCapture raw{0, 0, c.stack.data(), top};
  red_zone_capture(&raw);
  c.rip = raw.rip;
  c.rsp = raw.rsp;
  c.stack.resize(top - raw.rsp);
}

std::vector<uint64_t> pcs_of(const UnwoundStack& u) {
  return {u.pcs.begin(), u.pcs.end()};
}

uint64_t address_of(void (*fn)(Capture&)) {
  return reinterpret_cast<uint64_t>(fn);
}

// Whether `pcs` has, after the leaf, return addresses into level2 and
// level1, in that order.
bool through_levels(std::span<const uint64_t> pcs) {
  auto in = [](uint64_t pc, void (*fn)(Capture&)) {
    return pc > address_of(fn) && pc - address_of(fn) < 256;
  };
  auto two = std::find_if(pcs.begin(), pcs.end(), [&](uint64_t pc) { return in(pc, level2); });
  return two != pcs.end() &&
         std::any_of(two, pcs.end(), [&](uint64_t pc) { return in(pc, level1); });
}

format::ProcessInfo self() {
  record::ElfIdentities identities;
  return record::read_process(static_cast<uint32_t>(getpid()), 0, identities);
}

TEST(DwarfUnwinder, UnwindsACopiedStackThroughTheBinarysCfi) {
  Capture c;
  level1(c);
  Recording r = one_window(c.rsp, c.stack, {c.rip, c.rsp, c.rbp}, self());
  FileFinder files({});
  DwarfUnwinder unwinder(files);
  const UnwoundStack& u = unwinder.unwind(r, {0, 7, 0, 0, 0});
  EXPECT_TRUE(through_levels(u.pcs)) << u.pcs.size() << " frames";
  EXPECT_EQ(u.pcs.front(), c.rip);
}

// The binaries gone, the recording's embedded CFI unwinds the same.
TEST(DwarfUnwinder, TheEmbeddedCfiUnwindsTheSameAsTheFiles) {
  Capture c;
  level1(c);
  format::ProcessInfo process = self();
  Recording with_files = one_window(c.rsp, c.stack, {c.rip, c.rsp, c.rbp}, process);
  FileFinder files({});
  DwarfUnwinder unwinder(files);
  const std::vector<uint64_t> expected = pcs_of(unwinder.unwind(with_files, {0, 7, 0, 0, 0}));

  Recording embedded = one_window(c.rsp, c.stack, {c.rip, c.rsp, c.rbp}, process);
  auto cfi = std::make_shared<std::unordered_map<std::string, format::ElfCfi>>();
  for (const format::Mapping& m : process.mappings) {
    if (m.build_id.empty() || m.path[0] != '/' || cfi->count(m.build_id))
      continue;
    ElfUnwindTables t = read_unwind_tables(m.path);
    auto text = [](std::span<const std::byte> b) {
      return std::string(reinterpret_cast<const char*>(b.data()), b.size());
    };
    (*cfi)[m.build_id] = {m.build_id,           m.path,
                          t.segments,           t.eh_frame_hdr_address,
                          text(t.eh_frame_hdr), t.eh_frame_address,
                          text(t.eh_frame)};
  }
  embedded.embedded_cfi = cfi;
  SymbolizeOptions nowhere;
  nowhere.sources.symfs = "/nonexistent-symfs";
  FileFinder none(nowhere);
  DwarfUnwinder from_embedded(none);
  EXPECT_EQ(pcs_of(from_embedded.unwind(embedded, {0, 7, 0, 0, 0})), expected);
  EXPECT_TRUE(through_levels(expected));
}

// What a recording embeds since 1.9: only the FDEs (and their CIEs) that
// the leaf and the window's words can reach, picked by the recorder; the
// report builds the sections again from those pieces and unwinds the same.
TEST(DwarfUnwinder, UnwindsTheSameThroughTheEmbeddedPiecesAlone) {
  Capture c;
  level1(c);
  const format::ProcessInfo process = self();
  Recording with_files = one_window(c.rsp, c.stack, {c.rip, c.rsp, c.rbp}, process);
  FileFinder files({});
  DwarfUnwinder unwinder(files);
  const std::vector<uint64_t> expected = pcs_of(unwinder.unwind(with_files, {0, 7, 0, 0, 0}));
  ASSERT_TRUE(through_levels(expected));

  record::fakes::FakeProcesses source;
  source.on_read = [&](uint32_t, uint64_t) { return process; };
  record::ProcessTracker tracker(source);
  ASSERT_TRUE(tracker.observe(process.pid, std::vector<uint64_t>{c.rip}, true, 0));
  // The pieces come in two frames, as a recording's do: the leaf's first,
  // then the rest, which a report that already unwound must use too.
  record::CfiEmbedder embedder;
  embedder.take(process);
  auto cfi = std::make_shared<std::unordered_map<std::string, format::ElfCfi>>();
  size_t bytes = 0, section = 0;
  auto take = [&] {
    for (format::ElfCfi& f : embedder.drain()) {
      EXPECT_TRUE(f.eh_frame.empty());
      for (const format::CfiPiece& p : f.pieces)
        bytes += p.bytes.size();
      section += f.eh_frame_size;
      auto [it, first] = cfi->try_emplace(f.build_id, f);
      if (!first)
        it->second.pieces.insert(it->second.pieces.end(), f.pieces.begin(), f.pieces.end());
    }
  };
  embedder.take_pc(process.pid, c.rip, tracker);
  take();
  Recording embedded = one_window(c.rsp, c.stack, {c.rip, c.rsp, c.rbp}, process);
  add_window(embedded, 1, c.rsp, c.stack, {c.rip, c.rsp, c.rbp});
  embedded.embedded_cfi = cfi;
  SymbolizeOptions nowhere;
  nowhere.sources.symfs = "/nonexistent-symfs";
  FileFinder none(nowhere);
  DwarfUnwinder from_pieces(none);
  EXPECT_NE(pcs_of(from_pieces.unwind(embedded, {0, 7, 0, 0, 0})), expected) << "the leaf's alone";

  embedder.take_words(process.pid, std::as_bytes(std::span(c.stack)), tracker);
  take();
  EXPECT_TRUE(embedder.drain().empty());  // each entry once per file
  // A few functions' entries of tables of thousands.
  EXPECT_LT(bytes * 10, section);
  EXPECT_EQ(pcs_of(from_pieces.unwind(embedded, {0, 7, 0, 0, 1})), expected);
}

// Without any call frame information the walk stops at once; the
// frame-pointer chain recorded beside the window goes on from there.
TEST(DwarfUnwinder, ANoCfiWalkJoinsTheFramePointerChain) {
  Recording r = one_window(0x7fff0000, std::vector<uint8_t>(256), {0x401000, 0x7fff0000, 0});
  r.stacks = {};
  r.stacks.add(0, {{{}, {0x401000, 0x402000, 0x403000}}});
  SymbolizeOptions nowhere;
  nowhere.sources.symfs = "/nonexistent-symfs";
  FileFinder none(nowhere);
  DwarfUnwinder unwinder(none);
  const UnwoundStack& u = unwinder.unwind(r, {0, 7, 0, 0, 0});
  EXPECT_EQ(pcs_of(u), (std::vector<uint64_t>{0x401000, 0x402000, 0x403000}));
  EXPECT_TRUE(u.spliced);
  EXPECT_EQ(u.end, UnnamedReason::kNone);
  // A chain that ends there too adds nothing: the walk's reason stands.
  r.stacks = {};
  r.stacks.add(0, {{{}, {0x401000}}});
  DwarfUnwinder again(none);
  const UnwoundStack& alone = again.unwind(r, {0, 7, 0, 0, 0});
  EXPECT_EQ(pcs_of(alone), (std::vector<uint64_t>{0x401000}));
  EXPECT_FALSE(alone.spliced);
  EXPECT_EQ(alone.end, UnnamedReason::kNoCfi);
}

// A complete walk says so, though a leaf's register saved below the window
// could not be read.
TEST(DwarfUnwinder, AReadBelowTheWindowDoesNotCutAWalkThatGoesOn) {
  Capture c;
  c.leaf = capture_with_red_zone;
  level1(c);
  ASSERT_GT(c.stack.size(), 0u);
  Recording r = one_window(c.rsp, c.stack, {c.rip, c.rsp, c.rbp}, self());
  FileFinder files({});
  DwarfUnwinder unwinder(files);
  const UnwoundStack& u = unwinder.unwind(r, {0, 7, 0, 0, 0});
  EXPECT_TRUE(through_levels(u.pcs)) << u.pcs.size() << " frames";
  EXPECT_EQ(u.end, UnnamedReason::kNone) << u.pcs.size() << " frames";
}

// The step rules walk as libdwfl does, frame for frame and to the same
// end, wherever the window is cut (mid-frame, just after a return address,
// or before the leaf's frame), and with registers pointing elsewhere.
TEST(DwarfUnwinder, TheStepRulesWalkAsLibdwflDoes) {
  Capture c;
  c.leaf = capture_with_red_zone;
  level1(c);
  ASSERT_GT(c.stack.size(), 64u);
  const format::ProcessInfo process = self();
  FileFinder files({});
  CfiFiles cfi_files;
  size_t full = 0, by_rules = 0, sizes = 0;
  for (size_t size = 0; size <= c.stack.size(); size += 8) {
    std::vector<uint8_t> cut(c.stack.begin(), c.stack.begin() + static_cast<ptrdiff_t>(size));
    const Recording r = one_window(c.rsp, cut, {c.rip, c.rsp, c.rbp}, process);
    AddressSpace space(r, r.processes.at(7), files, cfi_files);
    const format::UserWindow& w = *r.windows.find(0);
    const Walk rules = space.unwind(r, w, AddressSpace::Walker::kRules);
    by_rules += space.libdwfl_walks() == 0;
    const Walk libdwfl = space.unwind(r, w, AddressSpace::Walker::kLibdwfl);
    EXPECT_EQ(rules.pcs, libdwfl.pcs) << size << " bytes";
    EXPECT_EQ(rules.end, libdwfl.end) << size << " bytes";
    full += rules.end == UnnamedReason::kNone;
    ++sizes;
  }
  EXPECT_GE(full, 1u);         // the whole stack, at least, unwinds to the end
  EXPECT_EQ(by_rules, sizes);  // and the rules walked them all
  for (const std::vector<uint64_t>& regs : {std::vector<uint64_t>{c.rip, 0x1000, 0x2000},
                                            {c.rip + 1, c.rsp + 8, c.rbp},
                                            {0, c.rsp, 0}}) {
    const Recording r = one_window(c.rsp, c.stack, regs, process);
    AddressSpace space(r, r.processes.at(7), files, cfi_files);
    const format::UserWindow& w = *r.windows.find(0);
    const Walk rules = space.unwind(r, w, AddressSpace::Walker::kRules);
    const Walk libdwfl = space.unwind(r, w, AddressSpace::Walker::kLibdwfl);
    EXPECT_EQ(rules.pcs, libdwfl.pcs);
    EXPECT_EQ(rules.end, libdwfl.end);
  }
}

// Thousands of windows at once, on every core, unwind as they do one
// after the other: the same frames, ends and refs standing for them.
TEST(DwarfUnwinder, AllAtOnceUnwindsAsOneAfterTheOther) {
  Capture c;
  c.leaf = capture_with_red_zone;
  level1(c);
  ASSERT_GT(c.stack.size(), 64u);
  Recording r = no_windows();
  for (uint32_t pid : {7u, 8u}) {
    format::ProcessInfo process = self();
    process.pid = pid;
    r.processes[pid].push_back(std::move(process));
  }
  std::vector<StackRef> refs;
  uint32_t id = 0;
  for (int copy = 0; copy < 3; ++copy)
    for (size_t size = 8; size <= c.stack.size(); size += 8) {
      std::vector<uint8_t> cut(c.stack.begin(), c.stack.begin() + static_cast<ptrdiff_t>(size));
      const uint32_t window = add_window(r, id++, c.rsp, cut, {c.rip, c.rsp, c.rbp});
      refs.push_back({0, copy == 1 ? 8u : 7u, 0, 0, window});
      refs.push_back(refs.back());  // asked for twice
    }
  ASSERT_GE(refs.size(), 4000u) << "few enough for one thread: the test would test less";
  FileFinder files({});
  DwarfUnwinder all(files), one(files);
  std::vector<StackRef> standing = refs;
  all.settle(r, r.windows, standing);
  Recording windowless = r;  // what stands for each ref is known without its window
  windowless.windows = {};
  size_t full = 0, replaced = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    const StackRef& ref = refs[i];
    const UnwoundStack& a = all.unwind(windowless, standing[i]);
    const UnwoundStack& b = one.unwind(r, ref);
    ASSERT_EQ(pcs_of(a), pcs_of(b)) << "window " << ref.window;
    ASSERT_EQ(a.end, b.end) << "window " << ref.window;
    ASSERT_EQ(a.stands_for, b.stands_for) << "window " << ref.window;
    ASSERT_EQ(standing[i], b.stands_for) << "window " << ref.window;
    ASSERT_EQ(standing[i].pid, ref.pid);
    full += a.end == UnnamedReason::kNone;
    replaced += standing[i] != ref;
  }
  EXPECT_GT(full, 0u);
  EXPECT_GT(replaced, 0u) << "windows that unwind alike stand for each other";
}

// Hostile or odd windows end with a reason, never a crash or a guess.
TEST(DwarfUnwinder, OddWindowsEndWithAReason) {
  Capture c;
  level1(c);
  format::ProcessInfo process = self();
  FileFinder files({});
  DwarfUnwinder unwinder(files);
  // Registers pointing far from the window: nothing can be read.
  Recording away = one_window(c.rsp, c.stack, {c.rip, 0x1000, 0x2000}, process);
  const UnwoundStack& u = unwinder.unwind(away, {0, 7, 0, 0, 0});
  EXPECT_NE(u.end, UnnamedReason::kNone);
  EXPECT_LE(u.pcs.size(), 2u);
  // Cut mid-frame: the walk stops where the window does, and says so.
  std::vector<uint8_t> cut(c.stack.begin(), c.stack.begin() + 24);
  Recording short_window = one_window(c.rsp, cut, {c.rip, c.rsp, c.rbp}, process);
  DwarfUnwinder again(files);
  EXPECT_EQ(again.unwind(short_window, {0, 7, 0, 0, 0}).end, UnnamedReason::kWindowTooSmall);
  // A 32-bit task's stack is not read as a 64-bit one.
  Recording compat = one_window(c.rsp, c.stack, {c.rip, c.rsp, c.rbp}, process);
  format::UserWindow k32 = *compat.windows.find(0);
  k32.abi = format::UserAbi::k32;
  compat.windows = {};
  compat.windows.add(0, {k32});
  DwarfUnwinder third(files);
  EXPECT_EQ(third.unwind(compat, {0, 7, 0, 0, 0}).end, UnnamedReason::k32BitTask);
  // A window a damaged frame lost.
  EXPECT_EQ(third.unwind(compat, {0, 7, 0, 0, 9}).end, UnnamedReason::kUnreadableStack);
}

// A sample without a window (a kernel thread's, one whose stack could not
// be copied) is its frame-pointer chain, settled as it is.
TEST(DwarfUnwinder, ASampleWithoutAWindowIsItsChain) {
  Recording r = no_windows();
  r.stacks = {};
  r.stacks.add(0, {{{}, {0x401000, 0x402000}}});
  FileFinder files({});
  DwarfUnwinder unwinder(files);
  std::vector<StackRef> refs{{0, 7, 0, 0, kNoWindow}};
  unwinder.settle(r, r.windows, refs);
  EXPECT_EQ(refs[0], (StackRef{0, 7, 0, 0, kNoWindow}));
  const UnwoundStack u = unwinder.unwind(r, refs[0]);
  EXPECT_EQ(pcs_of(u), (std::vector<uint64_t>{0x401000, 0x402000}));
  EXPECT_FALSE(u.from_window);
}

// The recorded chain as it is, windows left out, and a chain that filled
// every frame a sample holds ends with a reason: its outer frames are cut.
TEST(FramePointerUnwinder, IsTheRecordedChain) {
  Recording r = no_windows();
  r.stacks = {};
  r.stacks.add(0, {{{0xffffffff81000000}, {0x401000, 0x402000}},
                   {{}, std::vector<uint64_t>(format::kMaxStackFrames, 0x401000)}});
  FramePointerUnwinder unwinder;
  EXPECT_TRUE(unwinder.unwinds(r.info)) << "every recording has its chains";
  std::vector<StackRef> refs{{0, 7, 0, 0, 3}, {0, 7, 0, 1, 4}};
  unwinder.settle(r, r.windows, refs);
  EXPECT_EQ(refs[0], (StackRef{0, 7, 0, 0, kNoWindow})) << "--unwind fp leaves windows out";
  const UnwoundStack u = unwinder.unwind(r, refs[0]);
  EXPECT_EQ(pcs_of(u), (std::vector<uint64_t>{0x401000, 0x402000}));
  EXPECT_EQ(u.end, UnnamedReason::kNone);
  EXPECT_EQ(u.stands_for, refs[0]);
  EXPECT_EQ(unwinder.unwind(r, refs[1]).end, UnnamedReason::kStackTruncated);
  EXPECT_TRUE(unwinder.unwind(r, {0, 7, 0, 9, kNoWindow}).pcs.empty())
      << "a stack a damaged frame lost";
}

}  // namespace
}  // namespace ebprof::report
