#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/text.h"
#include "report/write/flamegraph_writer.h"

namespace ebprof::report {
namespace {

constexpr double kWidth = 1200, kFrameHeight = 16, kMargin = 10, kTop = 36;
constexpr double kCharWidth = 6.5;  // of the 11px font, for cutting labels to fit

// The page's palette, so an image and a page of one profile look alike.
std::string fill(const FlameNode& n, bool diff) {
  if (diff) {
    const double total = std::max(n.value, n.base);
    const double d = total > 0 ? (n.value - n.base) / total : 0;
    const int fade = static_cast<int>(std::lround(255 * (1 - std::min(std::fabs(d), 1.0))));
    return d >= 0 ? string_printf("rgb(255,%d,%d)", fade, fade)
                  : string_printf("rgb(%d,%d,255)", fade, fade);
  }
  // The page's hash of the name, so that a name has one colour in both.
  uint32_t h = 0;
  for (unsigned char c : n.name)
    h = h * 31 + c;
  const double v = h / 4294967295.0;
  auto c = [&](int base, int span) { return base + static_cast<int>(std::lround(span * v)); };
  switch (n.kind) {
    case FlameKind::kKernel:
      return string_printf("rgb(%d,%d,%d)", c(70, 40), c(170, 40), c(70, 30));
    case FlameKind::kInlined:
      return string_printf("rgb(80,%d,%d)", c(200, 40), c(220, 30));
    case FlameKind::kUnknown:
      return string_printf("rgb(%d,%d,%d)", c(170, 30), c(170, 30), c(170, 30));
    case FlameKind::kRoot:
    case FlameKind::kComm:
      return string_printf("rgb(120,%d,220)", c(150, 50));
    case FlameKind::kUser:
      break;
  }
  return string_printf("rgb(%d,%d,50)", c(205, 50), c(80, 130));
}

int depth(const std::vector<FlameNode>& nodes, uint32_t i) {
  int d = 0;
  for (uint32_t c : nodes[i].children)
    d = std::max(d, depth(nodes, c));
  return d + 1;
}

}  // namespace

void write_flamegraph_svg(std::ostream& out, const std::vector<FlameStack>& stacks,
                          const FlameOptions& options) {
  const std::vector<FlameNode> nodes = build_flame_tree(stacks);
  const int levels = depth(nodes, 0);
  const double height = kTop + levels * kFrameHeight + kMargin;
  const double total = nodes[0].value;
  const double scale = total > 0 ? (kWidth - 2 * kMargin) / total : 0;
  out << "<?xml version=\"1.0\" standalone=\"no\"?>\n"
      << string_printf(
             "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" ",
             kWidth, height, kWidth, height)
      << "xmlns=\"http://www.w3.org/2000/svg\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      << string_printf("<text x=\"%.0f\" y=\"22\" ", kWidth / 2)
      << "font-family=\"Verdana\" font-size=\"15\" text-anchor=\"middle\">"
      << xml_escape(options.title) << "</text>\n";
  auto draw = [&](auto&& self, uint32_t i, double x, int level) -> void {
    const FlameNode& n = nodes[i];
    const double w = n.value * scale;
    if (w < 1)
      return;
    const double y = kTop + (levels - 1 - level) * kFrameHeight;
    std::string tip = n.name;
    tip += string_printf(" (%.10g ", n.value);
    tip += options.unit;
    tip += string_printf(", %.2f%%)", total > 0 ? 100 * n.value / total : 0);
    if (options.diff)
      tip += string_printf(" base %.10g, delta %+.10g", n.base, n.value - n.base);
    out << "<g><title>" << xml_escape(tip) << "</title>"
        << string_printf("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"", x, y,
                         w, kFrameHeight - 1)
        << fill(n, options.diff) << (options.diff ? "\" stroke=\"#d8d8d8" : "") << "\" rx=\"2\"/>";
    const size_t fits = static_cast<size_t>(std::max(0.0, (w - 6) / kCharWidth));
    if (fits >= 3) {
      std::string label = n.name;
      if (label.size() > fits) {
        label.resize(fits - 2);
        label += "..";
      }
      out << string_printf("<text x=\"%.1f\" y=\"%.1f\" font-family=\"Verdana\" font-size=\"11\">",
                           x + 3, y + 11.5)
          << xml_escape(label) << "</text>";
    }
    out << "</g>\n";
    double cx = x;
    for (uint32_t c : n.children) {
      self(self, c, cx, level + 1);
      cx += nodes[c].value * scale;
    }
  };
  draw(draw, 0, kMargin, 0);
  out << "</svg>\n";
}

}  // namespace ebprof::report
