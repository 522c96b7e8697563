#pragma once

// What a report is to do, decided once from its options: the command, the
// inputs, the output format, the filters, what keys keep apart, the
// weight. Everything a user can get wrong is checked here, before any file
// is read or -o is truncated.

#include <span>
#include <string>
#include <vector>

#include "report/aggregate/diff.h"
#include "report/aggregate/stack_filter.h"
#include "report/load/recording.h"
#include "report/load/sample_filter.h"
#include "report/locate/options.h"
#include "report/run/formats.h"
#include "report/run/options.h"
#include "report/write/folded_writer.h"
#include "report/write/pprof_writer.h"
#include "report/write/top_writer.h"

namespace ebprof::report {

// Where a report goes.
enum class Sink : uint8_t {
  kStdout,
  kFile,       // -o FILE: written beside it and renamed over it once whole
  kDirectory,  // --split DURATION -o DIR: a file per slice of wall-clock time
};

// Where a recording's native frames come from (--unwind).
enum class UnwindMode : uint8_t {
  kDwarf,         // its copies of the stack, where it has them
  kFramePointer,  // the frame-pointer chain recorded beside them
};

// What counts are made of (--weight).
enum class Weight : uint8_t {
  kAuto,     // time when intervals off CPU are counted (counting them says little), else samples
  kSamples,  // samples and intervals
  kTime,     // a sample's period, an interval's length
};

struct Plan {
  Command command = Command::kReport;
  const FormatInfo* format = nullptr;
  // The recordings to read: -i's (with info's and dump's FILEs), diff's
  // BASE and NEW, merge's inputs.
  std::vector<std::string> inputs;
  std::string output;  // -o; "" for stdout; with --split, a directory
  Sink sink = Sink::kStdout;
  uint64_t split_ns = 0;     // --split: pprof files per slice of this length
  bool follow = false;       // --follow: the top table again every second until the end frame
  PprofLabels pprof_labels;  // --labels
  uint64_t max_memory = 0;   // --max-memory, or the machine's default_memory_budget()
  SampleFilter samples;
  StackFilter stacks;
  SymbolizeOptions symbols;  // without debuginfod, which the run adds
  double debuginfod_timeout_s = 30;
  Grouping grouping;
  Weight weight = Weight::kAuto;
  UnwindMode unwind = UnwindMode::kDwarf;
  TopOptions top;
  bool header = false;  // --header: what info says, before the report
  FoldedOptions folded;
  Normalize normalize = Normalize::kTotal;
  Join join = Join::kSymbol;
};

// Throws Error, one line naming the option and the fix, for options that
// cannot work together or values that do not parse.
Plan make_plan(const ReportOptions& options);

// What the counts of a report over `sides` (one, or diff's two) are in:
// microseconds for --weight time (or auto with intervals off CPU in
// view), else samples. Throws Error for time over samples of an event
// that is not a clock.
Unit unit_for(const Plan& plan, std::span<const std::span<const Recording>> sides);

// Throws Error when the plan's --view shows what `recordings` never
// recorded: an empty report would say nothing of why.
void check_view(const Plan& plan, std::span<const Recording> recordings);

}  // namespace ebprof::report
