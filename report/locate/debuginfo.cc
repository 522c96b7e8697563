#include "report/locate/debuginfo.h"

#include "common/text.h"

namespace ebprof::report {

std::string binary_path(const SymbolSources& sources, const std::string& path) {
  return sources.symfs + path;
}

std::vector<std::string> debuginfo_paths(const SymbolSources& sources, const std::string& path,
                                         const std::string& build_id,
                                         const std::string& debuglink) {
  std::vector<std::string> out;
  const std::string hex = build_id.empty() ? "" : hex_bytes(build_id);
  if (hex.size() > 2)
    for (const std::string& dir : sources.debug_dirs)
      out.push_back(sources.symfs + dir + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) +
                    ".debug");
  const size_t slash = path.rfind('/');
  if (!debuglink.empty() && debuglink.find('/') == std::string::npos &&
      slash != std::string::npos) {
    const std::string dir = path.substr(0, slash);
    out.push_back(sources.symfs + dir + "/" + debuglink);
    out.push_back(sources.symfs + dir + "/.debug/" + debuglink);
    for (const std::string& debug_dir : sources.debug_dirs)
      out.push_back(sources.symfs + debug_dir + dir + "/" + debuglink);
  }
  return out;
}

}  // namespace ebprof::report
