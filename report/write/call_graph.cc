#include "report/write/call_graph.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "common/error.h"
#include "common/text.h"
#include "report/write/frame_text.h"

namespace ebprof::report {
namespace {

// Where a row's graph starts: under the row's percentages.
const std::string kIndent(12, ' ');

struct Node {
  std::string name;
  uint64_t count = 0;
  std::map<std::string, size_t> kids;  // by name, into the tree
};

// The callers of each chain's leaf, nearest first, or outermost first.
std::vector<std::string> path_of(const Stack& s, bool outermost_first) {
  std::vector<std::string> path;
  for (size_t i = 1; i < s.frames.size(); ++i)
    path.push_back(frame_name(s.frames[i]));
  if (outermost_first)
    std::reverse(path.begin(), path.end());
  return path;
}

std::string percent(uint64_t n, uint64_t total) {
  return string_printf("%.2f%%", total ? 100.0 * double(n) / double(total) : 0.0);
}

class Tree {
 public:
  Tree(std::span<const CallChain> chains, bool outermost_first) : nodes_(1) {
    for (const CallChain& c : chains) {
      size_t at = 0;
      nodes_[0].count += c.count;
      for (std::string& name : path_of(*c.stack, outermost_first)) {
        auto [it, inserted] = nodes_[at].kids.try_emplace(name, nodes_.size());
        if (inserted)
          nodes_.push_back({std::move(name)});
        at = it->second;
        nodes_[at].count += c.count;
      }
    }
  }

  // perf's layout: a branch "|--PCT--name" per caller where paths part,
  // the name alone a line where one path goes on.
  void write(std::ostream& out, uint64_t total, double min_percent) const {
    if (!nodes_[0].kids.empty())
      write_kids(out, 0, kIndent, total, min_percent, true);
  }

 private:
  void write_kids(std::ostream& out, size_t at, const std::string& prefix, uint64_t total,
                  double min_percent, bool first) const {
    std::vector<size_t> kids;
    for (const auto& [name, kid] : nodes_[at].kids)
      if (100.0 * double(nodes_[kid].count) / double(total) >= min_percent)
        kids.push_back(kid);
    std::stable_sort(kids.begin(), kids.end(),
                     [&](size_t a, size_t b) { return nodes_[a].count > nodes_[b].count; });
    if (kids.size() == 1 && nodes_[kids[0]].count == nodes_[at].count) {
      // One way on: perf marks where the path starts with ---.
      out << prefix << (first ? "---" : "") << nodes_[kids[0]].name << '\n';
      write_kids(out, kids[0], first ? prefix + "   " : prefix, total, min_percent, false);
      return;
    }
    for (size_t i = 0; i < kids.size(); ++i) {
      const bool last = i + 1 == kids.size();
      const std::string share = percent(nodes_[kids[i]].count, total);
      out << prefix << "|\n"
          << prefix << (last ? " --" : "|--") << share << "--" << nodes_[kids[i]].name << '\n';
      write_kids(out, kids[i], prefix + (last ? " " : "|") + std::string(share.size() + 4, ' '),
                 total, min_percent, false);
    }
  }

  std::vector<Node> nodes_;  // [0]: the row's function
};

}  // namespace

CallGraphOptions parse_call_graph(const std::string& spec) {
  const size_t comma = spec.find(',');
  const std::string type = spec.substr(0, comma);
  CallGraphOptions o;
  if (type == "graph" || type == "callee")
    o.mode = CallGraphMode::kGraph;
  else if (type == "caller")
    o.mode = CallGraphMode::kCaller;
  else if (type == "flat")
    o.mode = CallGraphMode::kFlat;
  else if (type == "folded")
    o.mode = CallGraphMode::kFolded;
  else if (type != "none")
    throw Error("--call-graph " + spec + ": use graph, caller, callee, flat, folded or none, " +
                "with ,PCT for the least share shown");
  if (comma != std::string::npos) {
    const std::string pct = spec.substr(comma + 1);
    char* end = nullptr;
    o.min_percent = std::strtod(pct.c_str(), &end);
    if (pct.empty() || *end != '\0' || o.min_percent < 0 || o.min_percent > 100)
      throw Error("--call-graph " + spec + ": " + pct + " is not a percentage (0 to 100)");
  }
  return o;
}

void write_call_graph(std::ostream& out, std::span<const CallChain> chains, uint64_t total,
                      const CallGraphOptions& options) {
  if (options.mode == CallGraphMode::kNone || chains.empty() || total == 0)
    return;
  if (options.mode == CallGraphMode::kGraph || options.mode == CallGraphMode::kCaller) {
    // A blank line after a tree, none for a row whose paths are all below
    // the threshold.
    std::ostringstream tree;
    Tree(chains, options.mode == CallGraphMode::kCaller).write(tree, total, options.min_percent);
    if (tree.tellp() > 0)
      out << tree.str() << '\n';
    return;
  }
  // Each distinct path once, most samples first.
  std::map<std::vector<std::string>, uint64_t> paths;
  for (const CallChain& c : chains) {
    std::vector<std::string> path = path_of(*c.stack, options.mode == CallGraphMode::kFolded);
    path.insert(options.mode == CallGraphMode::kFolded ? path.end() : path.begin(),
                frame_name(c.stack->frames[0]));
    paths[std::move(path)] += c.count;
  }
  std::vector<std::pair<std::vector<std::string>, uint64_t>> sorted(paths.begin(), paths.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  bool any = false;
  for (const auto& [path, n] : sorted) {
    if (100.0 * double(n) / double(total) < options.min_percent)
      continue;
    any = true;
    if (options.mode == CallGraphMode::kFolded) {
      out << kIndent << percent(n, total) << ' ';
      for (size_t i = 0; i < path.size(); ++i)
        out << (i ? ";" : "") << path[i];
      out << '\n';
    } else {
      out << kIndent << percent(n, total) << '\n';
      for (const std::string& frame : path)
        out << kIndent << "    " << frame << '\n';
      out << '\n';
    }
  }
  if (any && options.mode == CallGraphMode::kFolded)
    out << '\n';
}

}  // namespace ebprof::report
