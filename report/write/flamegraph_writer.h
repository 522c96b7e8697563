#pragma once

#include <ostream>
#include <vector>

#include "report/write/flame_tree.h"

namespace ebprof::report {

// One self-contained HTML page (no network: script, style and data inline):
// an interactive flame graph with zoom on click, reset, a regular-expression
// search that highlights matches and sums their share, tooltips, and an
// inverted view of each leaf's callers. Frames narrower than a pixel are
// drawn as one block, so 100k distinct stacks stay responsive.
void write_flamegraph_html(std::ostream& out, const std::vector<FlameStack>& stacks,
                           const FlameOptions& options);

// A static flame graph as SVG, for documents: the same layout and colours,
// a <title> tooltip per frame, frames narrower than a pixel left out.
void write_flamegraph_svg(std::ostream& out, const std::vector<FlameStack>& stacks,
                          const FlameOptions& options);

}  // namespace ebprof::report
