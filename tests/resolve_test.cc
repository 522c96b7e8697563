// The resolve stage: which unwinder a recording's native frames come
// from, what a resolved stack holds, and that each outcome is named once.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "report/locate/file_finder.h"
#include "report/resolve/stack_resolver.h"
#include "report/symbolize/symbolizer.h"
#include "report/unwind/unwinder.h"

namespace ebprof::report {
namespace {

// Unwinds every recording (or only --call-graph dwarf ones) to `pcs`, each
// ref standing for its window 0, and counts what it was asked.
class FakeUnwinder final : public Unwinder {
 public:
  FakeUnwinder(bool dwarf_only, std::vector<uint64_t> pcs, UnnamedReason end)
      : dwarf_only_(dwarf_only), pcs_(std::move(pcs)), end_(end) {}
  bool unwinds(const format::RecordingInfo& info) const override {
    return !dwarf_only_ || info.call_graph == format::CallGraph::kDwarf;
  }
  void settle(const Recording&, const IdRuns<format::UserWindow>&,
              std::span<StackRef> refs) override {
    for (StackRef& ref : refs)
      ref.window = 0;
    settled += refs.size();
  }
  UnwoundStack unwind(const Recording&, const StackRef& ref) override {
    ++unwound;
    StackRef standing = ref;
    standing.window = 0;
    return {
        .pcs = pcs_, .end = end_, .window_bytes = 512, .from_window = true, .stands_for = standing};
  }
  size_t settled = 0, unwound = 0;

 private:
  bool dwarf_only_;
  std::vector<uint64_t> pcs_;
  UnnamedReason end_;
};

struct Resolving {
  Resolving()
      : files(nowhere()),
        symbolizer(nowhere(), files, std::make_shared<FrameTable>()),
        resolver(symbolizer) {}
  static SymbolizeOptions nowhere() {
    SymbolizeOptions o;
    o.sources.symfs = "/nonexistent-symfs";
    return o;
  }
  FileFinder files;
  Symbolizer symbolizer;
  StackResolver resolver;
};

Recording recording(format::CallGraph call_graph) {
  Recording r;
  r.info.call_graph = call_graph;
  r.stacks.add(0, {{{0xffffffff81000010}, {0x401000, 0x402000}}});
  return r;
}

TEST(StackResolver, UnwindsWithTheFirstUnwinderOfTheRecordingsKind) {
  Resolving s;
  auto dwarf = std::make_unique<FakeUnwinder>(true, std::vector<uint64_t>{0x1, 0x2, 0x3},
                                              UnnamedReason::kNone);
  auto chain =
      std::make_unique<FakeUnwinder>(false, std::vector<uint64_t>{0x4}, UnnamedReason::kNone);
  FakeUnwinder& d = *dwarf;
  FakeUnwinder& c = *chain;
  s.resolver.add(std::move(dwarf));
  s.resolver.add(std::move(chain));
  const Recording windows = recording(format::CallGraph::kDwarf);
  EXPECT_EQ(s.resolver.stack(windows, {0, 7, 0, 0, 5}).size(), 4u)
      << "a kernel frame, three native";
  EXPECT_GT(d.unwound, 0u);
  EXPECT_EQ(c.unwound, 0u);
  Recording chains = recording(format::CallGraph::kFramePointer);
  chains.index = 1;
  EXPECT_EQ(s.resolver.stack(chains, {1, 7, 0, 0, kNoWindow}).size(), 2u);
  EXPECT_GT(c.unwound, 0u);
}

TEST(StackResolver, KernelThenNativeFramesAndARootWhereTheyStopShort) {
  Resolving s;
  s.resolver.add(std::make_unique<FakeUnwinder>(false, std::vector<uint64_t>{0x401000, 0x402000},
                                                UnnamedReason::kWindowTooSmall));
  const Recording r = recording(format::CallGraph::kDwarf);
  const FrameView frames = s.resolver.stack(r, {0, 7, 0, 0, 3});
  ASSERT_EQ(frames.size(), 4u);
  EXPECT_EQ(frames[0].kind, FrameKind::kKernel);
  EXPECT_EQ(frames[1].kind, FrameKind::kNative);
  EXPECT_EQ(frames[1].address, 0x401000u);
  EXPECT_EQ(frames[1].reason, UnnamedReason::kMapsNotRecorded);
  EXPECT_EQ(frames[2].address, 0x402000u);
  EXPECT_EQ(frames[3].kind, FrameKind::kStackEnd);
  EXPECT_EQ(frames[3].reason, UnnamedReason::kWindowTooSmall);
  EXPECT_EQ(frames[3].offset, 512u) << "the window it ran out of";
  // A stack defined in a frame the reader skipped: one frame that says so.
  const FrameView lost = s.resolver.stack(r, {0, 7, 0, 9, 3});
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].reason, UnnamedReason::kStackLost);
}

// Refs that stand for one outcome are named once: the same frames, in the
// same place. Settling prepares, and counting counts each sample once.
TEST(StackResolver, NamesEachOutcomeOnce) {
  Resolving s;
  auto fake =
      std::make_unique<FakeUnwinder>(false, std::vector<uint64_t>{0x401000}, UnnamedReason::kNone);
  FakeUnwinder& unwinder = *fake;
  s.resolver.add(std::move(fake));
  Recording r = recording(format::CallGraph::kDwarf);
  std::vector<StackRef> refs{{0, 7, 0, 0, 3}, {0, 7, 0, 0, 4}};
  s.resolver.settle(r, r.windows, refs);
  EXPECT_EQ(unwinder.settled, 2u);
  EXPECT_EQ(refs[0], refs[1]);
  EXPECT_EQ(s.resolver.stack(r, {0, 7, 0, 0, 3}).ids().data(),
            s.resolver.stack(r, {0, 7, 0, 0, 4}).ids().data());
  r.counts = {{SampleKey{.stack = refs[0]}, {2, 0}},
              {SampleKey{.stack = refs[1], .tid = 8}, {3, 0}}};
  EXPECT_EQ(s.resolver.count_unwinding(r).full, 5u);
}

}  // namespace
}  // namespace ebprof::report
