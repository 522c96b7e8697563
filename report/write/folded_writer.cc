#include "report/write/folded_writer.h"

#include <algorithm>
#include <string>

#include "report/model/sample_key.h"
#include "report/write/frame_text.h"

namespace ebprof::report {
namespace {

// ';' separates frames and a newline ends the stack: keep both out of comms
// and names (spaces are fine: the count follows the last one).
void append_name(std::string& line, const std::string& name) {
  for (char c : name)
    line += (c == ';' || c == '\n') ? '_' : c;
}

// FlameGraph's annotations: what colours a frame in flamegraph.pl.
const char* annotation(const Frame& f) {
  switch (f.kind) {
    case FrameKind::kKernel:
      return "_[k]";
    case FrameKind::kInlined:
      return "_[i]";
    case FrameKind::kJit:
      return "_[j]";
    default:
      return "";
  }
}

}  // namespace

uint32_t FoldedLines::text(std::string s) {
  auto [it, inserted] = text_ids_.try_emplace(std::move(s), static_cast<uint32_t>(texts_.size()));
  if (inserted)
    texts_.push_back(it->first);
  return it->second;
}

size_t FoldedLines::LineHash::operator()(const Line& line) const {
  size_t h = line.size();
  for (uint32_t id : line)
    h = hash_combine(h, id);
  return h;
}

size_t FoldedLines::add(const std::string& comm, uint32_t pid, const FrameView& frames) {
  Line line;
  line.reserve(frames.size() + 2);
  if (options_.comm || options_.pid) {
    std::string prefix;
    if (options_.comm)
      append_name(prefix, comm);
    if (options_.comm && options_.pid)
      prefix += '-';
    if (options_.pid)
      prefix += std::to_string(pid);
    line.push_back(text(std::move(prefix)));
  }
  bool in_user = !frames.empty() && !frames.back().kernel();
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (options_.delimit && in_user && it->kernel()) {
      line.push_back(text("-"));
      in_user = false;
    }
    auto [frame, made] = frame_texts_.try_emplace(&*it);
    if (made) {
      std::string name;
      append_name(name, frame_name(*it));
      if (options_.annotate)
        name += annotation(*it);
      frame->second = text(std::move(name));
    }
    line.push_back(frame->second);
  }
  if (line.empty())
    line.push_back(text("[no stack]"));
  auto [it, inserted] = index_.try_emplace(std::move(line), lines_.size());
  if (inserted)
    lines_.push_back(it->first);
  return it->second;
}

// As the joined texts compare (std::string's order, bytes unsigned),
// element by element: equal ids are equal texts, and where one text is a
// prefix of the other the shorter line goes on with ';', or ends.
bool FoldedLines::less(const Line& a, const Line& b) const {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] == b[i])
      continue;
    const std::string& x = texts_[a[i]];
    const std::string& y = texts_[b[i]];
    const size_t n = std::min(x.size(), y.size());
    if (const int c = x.compare(0, n, y, 0, n); c != 0)
      return c < 0;
    // Distinct texts, one a prefix of the other (';' never is in a text).
    const bool a_shorter = x.size() < y.size();
    const Line& shorter = a_shorter ? a : b;
    const int next_short = i + 1 < shorter.size() ? ';' : -1;
    const int next_long = static_cast<unsigned char>((a_shorter ? y : x)[n]);
    return (next_short < next_long) == a_shorter;
  }
  return a.size() < b.size();
}

std::vector<size_t> FoldedLines::sorted() const {
  std::vector<size_t> order(lines_.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return less(lines_[x], lines_[y]); });
  return order;
}

void FoldedLines::write(std::ostream& out, size_t index) const {
  const Line& line = lines_[index];
  for (size_t i = 0; i < line.size(); ++i) {
    if (i)
      out << ';';
    out << texts_[line[i]];
  }
}

void write_folded(std::ostream& out, const Profile& profile, const FoldedOptions& options) {
  FoldedLines lines(options);
  std::vector<uint64_t> counts;
  for (const ProfileStack& s : profile.stacks) {
    const size_t line = lines.add(profile.comm(s.key), s.key.stack.pid, s.frames);
    counts.resize(lines.size());
    counts[line] += s.values.count;
  }
  for (size_t line : lines.sorted()) {
    lines.write(out, line);
    out << ' ' << counts[line] << '\n';
  }
}

}  // namespace ebprof::report
