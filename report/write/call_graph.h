#pragma once

// The call graph under a row of the top table (perf report -g): the call
// paths of the row's self samples, as a tree of callers, a tree from the
// outermost caller in, or one path a line.

#include <cstdint>
#include <ostream>
#include <span>
#include <string>

#include "report/model/profile.h"

namespace ebprof::report {

enum class CallGraphMode : uint8_t {
  kNone,    // the flat table
  kGraph,   // a tree of the entry's callers, nearest first (perf's graph, callee order)
  kCaller,  // a tree from the outermost caller in to the entry (perf's caller order)
  kFlat,    // each call path on its own, a frame a line
  kFolded,  // each call path on one line, outermost first
};

struct CallGraphOptions {
  CallGraphMode mode = CallGraphMode::kNone;
  double min_percent = 0.5;  // branches and paths below this share of all samples are left out
};

// perf's -g / --call-graph grammar: TYPE,MIN[,PRINT_LIMIT],ORDER[,KEY], each
// part optional and in any order, as perf takes them: TYPE graph (or
// fractal), flat, folded or none; MIN the least share shown; ORDER callee
// (a tree of callers, the default) or caller (from the outermost in); KEY
// function. A later part of a kind wins. Throws Error naming a bad one.
CallGraphOptions parse_call_graph(const std::string& spec);

// A row's self samples on one stack: `count` of them, whose leaf frame is
// the row's.
struct CallChain {
  const ProfileStack* stack;
  uint64_t count;
};

// The call graph of `chains` in `mode`, shares of `total`.
void write_call_graph(std::ostream& out, std::span<const CallChain> chains, uint64_t total,
                      const CallGraphOptions& options);

}  // namespace ebprof::report
