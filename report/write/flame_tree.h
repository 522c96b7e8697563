#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/model/diff.h"
#include "report/model/profile.h"

namespace ebprof::report {

// One stack for a flame graph: its value and, in a diff, the base's value
// in the same units.
struct FlameStack {
  std::string comm;
  FrameView frames;  // leaf first
  double value = 0;
  double base = 0;
};

std::vector<FlameStack> flame_stacks(const Profile& profile);
std::vector<FlameStack> flame_stacks(const DiffProfile& diff);

// What colours a frame. The numbers are the HTML page's, in its data.
enum class FlameKind : uint8_t { kRoot = 0, kComm, kUser, kKernel, kInlined, kUnknown };

// The call tree: node 0 is the root ("all"), its children the comms, then
// the stacks root first. A node's value includes its children's.
struct FlameNode {
  std::string name;
  FlameKind kind = FlameKind::kUser;
  double value = 0;
  double base = 0;
  std::vector<uint32_t> children;  // indexes, in name order
};

std::vector<FlameNode> build_flame_tree(const std::vector<FlameStack>& stacks);

// What the page or image is titled and how values read.
struct FlameOptions {
  std::string title = "Flame graph";
  bool diff = false;             // colour by change: red grew, blue shrank
  std::string unit = "samples";  // of values
};

}  // namespace ebprof::report
