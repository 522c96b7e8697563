#include <string>
#include <string_view>
#include <unordered_map>

#include "common/text.h"
#include "report/write/flamegraph_html.h"
#include "report/write/flamegraph_writer.h"

namespace ebprof::report {
namespace {

// The tree as the page reads it: names once, then five numbers per node in
// pre-order (name index, kind, value, base, child count).
std::string tree_json(const std::vector<FlameNode>& nodes, const FlameOptions& options) {
  std::string names, flat;
  std::unordered_map<std::string_view, size_t> name_index;
  auto visit = [&](auto&& self, uint32_t i) -> void {
    const FlameNode& n = nodes[i];
    auto [it, inserted] = name_index.try_emplace(n.name, name_index.size());
    if (inserted) {
      if (!names.empty())
        names += ',';
      names += json_string(n.name);
    }
    flat += string_printf("%s%zu,%d,%.10g,%.10g,%zu", flat.empty() ? "" : ",", it->second,
                          static_cast<int>(n.kind), n.value, n.base, n.children.size());
    for (uint32_t c : n.children)
      self(self, c);
  };
  visit(visit, 0);
  return "{\"title\":" + json_string(options.title) +
         ",\"diff\":" + (options.diff ? "true" : "false") +
         ",\"unit\":" + json_string(options.unit) + ",\"names\":[" + names + "],\"nodes\":[" +
         flat + "]}";
}

}  // namespace

void write_flamegraph_html(std::ostream& out, const std::vector<FlameStack>& stacks,
                           const FlameOptions& options) {
  // Split at the placeholders first: a title or a function name that
  // happens to contain one must stay as it is.
  const std::string_view page = kFlamegraphHtml;
  constexpr std::string_view kTitle = "{{TITLE}}", kData = "{{DATA}}";
  const size_t title = page.find(kTitle), data = page.find(kData);
  out << page.substr(0, title) << xml_escape(options.title)
      << page.substr(title + kTitle.size(), data - title - kTitle.size())
      << tree_json(build_flame_tree(stacks), options) << page.substr(data + kData.size());
}

}  // namespace ebprof::report
