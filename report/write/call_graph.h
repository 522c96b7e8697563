#pragma once

// The call graph under a row of the top table (perf report -g): the call
// paths of the row's self samples, as a tree of callers, a tree from the
// outermost caller in, or one path a line; with --children, also what the
// row's function called.

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

// A row's samples on one stack: `count` of them, whose frame `entry` is the
// row's (0, the leaf, for its self samples).
struct CallChain {
  const ProfileStack* stack;
  uint64_t count;
  size_t entry = 0;
};

// The call graph of `chains`' callers in `mode`, shares of `total`.
void write_call_graph(std::ostream& out, std::span<const CallChain> chains, uint64_t total,
                      const CallGraphOptions& options);

// What the entries of `chains` called, perf's graph under a --children row:
// a tree from the entry to the leaves (one path a line, entry first, in
// flat and folded mode).
void write_callee_graph(std::ostream& out, std::span<const CallChain> chains, uint64_t total,
                        const CallGraphOptions& options);

}  // namespace ebprof::report
