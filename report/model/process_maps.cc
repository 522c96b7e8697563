#include "report/model/process_maps.h"

#include <algorithm>

#include "format/lookup.h"

namespace ebprof::report {

uint32_t capture_at(const ProcessMaps& maps, uint32_t pid, uint64_t time_ns) {
  auto it = maps.find(pid);
  if (it == maps.end())
    return 0;
  const auto& captures = it->second;
  auto after = std::upper_bound(
      captures.begin(), captures.end(), time_ns,
      [](uint64_t t, const format::ProcessInfo& c) { return t < c.captured_at_ns; });
  return after == captures.begin() ? 0 : static_cast<uint32_t>(after - captures.begin() - 1);
}

std::span<const format::ProcessInfo> captures_from(const ProcessMaps& maps, uint32_t pid,
                                                   uint32_t capture) {
  auto it = maps.find(pid);
  if (it == maps.end())
    return {};
  return std::span(it->second).subspan(std::min<size_t>(capture, it->second.size()));
}

const format::Mapping* mapping_in(std::span<const format::ProcessInfo> captures, uint64_t address) {
  for (const auto& capture : captures)
    if (const format::Mapping* m = format::find_mapping(capture.mappings, address))
      return m;
  return nullptr;
}

}  // namespace ebprof::report
