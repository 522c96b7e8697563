#include "report/write/flame_tree.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "report/write/frame_text.h"

namespace ebprof::report {
namespace {

FlameKind kind_of(const Frame& f) {
  if (!f.named())
    return FlameKind::kUnknown;
  switch (f.kind) {
    case FrameKind::kKernel:
      return FlameKind::kKernel;
    case FrameKind::kInlined:
      return FlameKind::kInlined;
    default:
      return FlameKind::kUser;
  }
}

}  // namespace

std::vector<FlameStack> flame_stacks(const Profile& profile) {
  std::vector<FlameStack> out;
  out.reserve(profile.stacks.size());
  for (const ProfileStack& s : profile.stacks)
    out.push_back({profile.comm(s.key), s.frames, static_cast<double>(s.values.count), 0});
  return out;
}

std::vector<FlameStack> flame_stacks(const DiffProfile& diff) {
  std::vector<FlameStack> out;
  out.reserve(diff.stacks.size());
  for (const DiffStack& d : diff.stacks)
    out.push_back({d.comm, d.frames, d.now * diff.scale.now, d.base * diff.scale.base});
  return out;
}

std::vector<FlameNode> build_flame_tree(const std::vector<FlameStack>& stacks) {
  std::vector<FlameNode> nodes{{"all", FlameKind::kRoot}};
  std::map<std::tuple<uint32_t, std::string, FlameKind>, uint32_t> index;
  auto child = [&](uint32_t parent, const std::string& name, FlameKind kind) {
    auto [it, inserted] =
        index.try_emplace({parent, name, kind}, static_cast<uint32_t>(nodes.size()));
    if (inserted) {
      nodes.push_back({name, kind});
      nodes[parent].children.push_back(it->second);
    }
    return it->second;
  };
  for (const FlameStack& s : stacks) {
    auto add = [&](uint32_t n) {
      nodes[n].value += s.value;
      nodes[n].base += s.base;
    };
    add(0);
    uint32_t at = child(0, s.comm, FlameKind::kComm);
    add(at);
    for (auto f = s.frames.rbegin(); f != s.frames.rend(); ++f) {
      at = child(at, frame_name(*f), kind_of(*f));
      add(at);
    }
  }
  for (FlameNode& n : nodes)
    std::sort(n.children.begin(), n.children.end(),
              [&](uint32_t a, uint32_t b) { return nodes[a].name < nodes[b].name; });
  return nodes;
}

}  // namespace ebprof::report
