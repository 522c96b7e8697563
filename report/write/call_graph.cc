#include "report/write/call_graph.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "common/text.h"
#include "report/write/frame_text.h"

namespace ebprof::report {
namespace {

// Where a row's graph starts: under the row's percentages.
const std::string kIndent(12, ' ');

std::string percent(uint64_t n, uint64_t total) {
  return string_printf("%.2f%%", total ? 100.0 * double(n) / double(total) : 0.0);
}

// A name id per distinct name a frame shows, each name made once however
// many stacks hold the frame: a call graph merges by name (one function
// called from several places is one caller), and a profile of 288k
// distinct stacks must not make a string per frame per stack.
class Names {
 public:
  uint32_t of(const FrameView& frames, size_t i) {
    auto [it, inserted] = by_frame_.try_emplace(frames.ids()[i]);
    if (inserted) {
      auto [name, fresh] = by_name_.try_emplace(frame_name(frames[i]), names_.size());
      if (fresh)
        names_.push_back(&name->first);
      it->second = name->second;
    }
    return it->second;
  }
  const std::string& operator[](uint32_t id) const { return *names_[id]; }

 private:
  std::unordered_map<uint32_t, uint32_t> by_frame_;  // frame id: name id
  std::unordered_map<std::string, uint32_t> by_name_;
  std::vector<const std::string*> names_;  // by name id, into by_name_
};

// Which way a call graph walks a chain from its entry.
enum class Walk : uint8_t {
  kCallers,      // its callers, nearest first
  kOutermostIn,  // its callers, from the outermost in
  kCallees,      // what it called, down to the leaf
};

// The frame of a chain `depth` steps along `walk`, as a name id; nullopt
// past its end.
std::optional<uint32_t> frame_at(const CallChain& c, size_t depth, Walk walk, Names& names) {
  const FrameView& frames = c.stack->frames;
  switch (walk) {
    case Walk::kCallers:
      if (c.entry + depth + 1 >= frames.size())
        return std::nullopt;
      return names.of(frames, c.entry + depth + 1);
    case Walk::kOutermostIn:
      if (c.entry + depth + 1 >= frames.size())
        return std::nullopt;
      return names.of(frames, frames.size() - 1 - depth);
    case Walk::kCallees:
      if (depth >= c.entry)
        return std::nullopt;
      return names.of(frames, c.entry - 1 - depth);
  }
  return std::nullopt;
}

// perf's layout: a branch "|--PCT--name" per caller where paths part, the
// name alone a line where one path goes on. Each level groups only the
// chains of a branch shown, so the work is the chains times the depth
// drawn, whatever the number of distinct paths.
class TreeWriter {
 public:
  TreeWriter(std::ostream& out, Names& names, uint64_t total, double min_percent, Walk walk)
      : out_(out), names_(names), total_(total), min_percent_(min_percent), walk_(walk) {}

  void write(std::vector<const CallChain*> chains, size_t depth, uint64_t count,
             const std::string& prefix, bool first) {
    struct Branch {
      uint32_t name;
      uint64_t count = 0;
      std::vector<const CallChain*> chains;
    };
    std::vector<Branch> branches;
    std::unordered_map<uint32_t, size_t> index;  // name id: into branches
    for (const CallChain* c : chains)
      if (std::optional<uint32_t> name = frame_at(*c, depth, walk_, names_)) {
        auto [it, inserted] = index.try_emplace(*name, branches.size());
        if (inserted)
          branches.push_back({*name});
        branches[it->second].count += c->count;
        branches[it->second].chains.push_back(c);
      }
    std::erase_if(branches, [&](const Branch& b) {
      return 100.0 * double(b.count) / double(total_) < min_percent_;
    });
    std::sort(branches.begin(), branches.end(), [&](const Branch& a, const Branch& b) {
      return a.count != b.count ? a.count > b.count : names_[a.name] < names_[b.name];
    });
    if (branches.size() == 1 && branches[0].count == count) {
      // One way on: perf marks where the path starts with ---.
      out_ << prefix << (first ? "---" : "") << names_[branches[0].name] << '\n';
      write(std::move(branches[0].chains), depth + 1, count, first ? prefix + "   " : prefix,
            false);
      return;
    }
    for (size_t i = 0; i < branches.size(); ++i) {
      const bool last = i + 1 == branches.size();
      const std::string share = percent(branches[i].count, total_);
      out_ << prefix << "|\n"
           << prefix << (last ? " --" : "|--") << share << "--" << names_[branches[i].name] << '\n';
      write(std::move(branches[i].chains), depth + 1, branches[i].count,
            prefix + (last ? " " : "|") + std::string(share.size() + 4, ' '), false);
    }
  }

 private:
  std::ostream& out_;
  Names& names_;
  const uint64_t total_;
  const double min_percent_;
  const Walk walk_;
};

}  // namespace

CallGraphOptions parse_call_graph(const std::string& spec) {
  CallGraphOptions o;
  o.mode = CallGraphMode::kGraph;  // as perf report: drawn unless asked not to
  if (spec.empty())
    return o;
  bool caller_order = false;
  size_t numbers = 0;
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string part = spec.substr(start, comma - start);
    start = comma + 1;
    char* end = nullptr;
    const double number = std::strtod(part.c_str(), &end);
    if (part == "graph" || part == "fractal") {
      o.mode = CallGraphMode::kGraph;
    } else if (part == "flat") {
      o.mode = CallGraphMode::kFlat;
    } else if (part == "folded") {
      o.mode = CallGraphMode::kFolded;
    } else if (part == "none") {
      o.mode = CallGraphMode::kNone;
    } else if (part == "caller" || part == "callee") {
      caller_order = part == "caller";
    } else if (part == "function") {
      // perf's default key; the only one there is here.
    } else if (!part.empty() && *end == '\0' && std::isfinite(number) && numbers < 2) {
      // MIN, then perf's PRINT_LIMIT, which has no counterpart here.
      if (numbers++ == 0 && (number < 0 || number > 100))
        throw Error("-g " + spec + ": " + part + " is not a percentage (0 to 100)");
      if (numbers == 1)
        o.min_percent = number;
    } else {
      throw Error("-g " + spec + ": " + (part.empty() ? "an empty part" : "'" + part + "'") +
                  " is none of perf's TYPE (graph, flat, folded, none), MIN (a percentage), "
                  "ORDER (caller, callee) or KEY (function)");
    }
  }
  if (o.mode == CallGraphMode::kGraph && caller_order)
    o.mode = CallGraphMode::kCaller;
  return o;
}

namespace {

// The graph of `chains` along `walk` from their entries; a tree starts
// with `root`'s name when it is set (---entry, then what it called).
void write_graph(std::ostream& out, std::span<const CallChain> chains, uint64_t total,
                 const CallGraphOptions& options, Walk walk, bool root) {
  if (options.mode == CallGraphMode::kNone || chains.empty() || total == 0)
    return;
  Names names;
  if (options.mode == CallGraphMode::kGraph || options.mode == CallGraphMode::kCaller) {
    // A blank line after a tree, none for a row whose paths are all below
    // the threshold.
    std::ostringstream tree;
    uint64_t count = 0;
    std::vector<const CallChain*> all;
    for (const CallChain& c : chains) {
      all.push_back(&c);
      count += c.count;
    }
    std::string prefix = kIndent;
    if (root && 100.0 * double(count) / double(total) >= options.min_percent) {
      tree << kIndent << "---" << names[names.of(chains[0].stack->frames, chains[0].entry)] << '\n';
      prefix += "   ";
    }
    TreeWriter(tree, names, total, options.min_percent, walk)
        .write(std::move(all), 0, count, prefix, !root);
    if (tree.tellp() > 0)
      out << tree.str() << '\n';
    return;
  }
  // Each distinct path once, most samples first: the entry, then its
  // callers (flat) or what it called, or the outermost caller first
  // (folded).
  const bool entry_last = walk == Walk::kOutermostIn;
  std::map<std::vector<uint32_t>, uint64_t> paths;
  for (const CallChain& c : chains) {
    std::vector<uint32_t> path;
    if (!entry_last)
      path.push_back(names.of(c.stack->frames, c.entry));
    for (size_t d = 0; std::optional<uint32_t> name = frame_at(c, d, walk, names); ++d)
      path.push_back(*name);
    if (entry_last)
      path.push_back(names.of(c.stack->frames, c.entry));
    paths[std::move(path)] += c.count;
  }
  std::vector<std::pair<std::vector<uint32_t>, uint64_t>> sorted(paths.begin(), paths.end());
  std::sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
    if (a.second != b.second)
      return a.second > b.second;
    return std::lexicographical_compare(
        a.first.begin(), a.first.end(), b.first.begin(), b.first.end(),
        [&](uint32_t x, uint32_t y) { return names[x] < names[y]; });  // ties: by name
  });
  bool any = false;
  for (const auto& [path, n] : sorted) {
    if (100.0 * double(n) / double(total) < options.min_percent)
      continue;
    any = true;
    if (options.mode == CallGraphMode::kFolded) {
      out << kIndent << percent(n, total) << ' ';
      for (size_t i = 0; i < path.size(); ++i)
        out << (i ? ";" : "") << names[path[i]];
      out << '\n';
    } else {
      out << kIndent << percent(n, total) << '\n';
      for (uint32_t frame : path)
        out << kIndent << "    " << names[frame] << '\n';
      out << '\n';
    }
  }
  if (any && options.mode == CallGraphMode::kFolded)
    out << '\n';
}

}  // namespace

void write_call_graph(std::ostream& out, std::span<const CallChain> chains, uint64_t total,
                      const CallGraphOptions& options) {
  const bool outermost_first =
      options.mode == CallGraphMode::kCaller || options.mode == CallGraphMode::kFolded;
  write_graph(out, chains, total, options, outermost_first ? Walk::kOutermostIn : Walk::kCallers,
              false);
}

void write_callee_graph(std::ostream& out, std::span<const CallChain> chains, uint64_t total,
                        const CallGraphOptions& options) {
  write_graph(out, chains, total, options, Walk::kCallees, true);
}

}  // namespace ebprof::report
