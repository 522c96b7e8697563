// libFuzzer target: any byte sequence as a recording, through everything a
// report does with a file from a stranger: the reader, aggregation (per
// thread and merged), the sample and stack filters, symbolization and every
// writer. Only a one-line Error may come out.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "format/crc32c.h"
#include "format/framing.h"
#include "report/diff.h"
#include "report/dump_writer.h"
#include "report/flamegraph_writer.h"
#include "report/folded_writer.h"
#include "report/info_writer.h"
#include "report/merge.h"
#include "report/pprof_writer.h"
#include "report/profile.h"
#include "report/sample_filter.h"
#include "report/script_writer.h"
#include "report/stack_filter.h"
#include "report/symbolizer.h"
#include "report/top_writer.h"

namespace {

namespace fmt = ebprof::format;

// A mutated payload almost never keeps its CRC, so on its own the fuzzer
// would test little beyond the checksum. This copy has every frame's CRC
// recomputed, so mutations reach decompression and Cap'n Proto decoding.
std::vector<uint8_t> with_valid_checksums(const uint8_t* data, size_t size) {
  std::vector<uint8_t> out(data, data + size);
  size_t at = fmt::kFileHeaderSize;
  while (at + fmt::kFrameHeaderSize <= out.size()) {
    fmt::FrameHeader h = fmt::decode_frame_header(&out[at]);
    size_t end = at + fmt::kFrameHeaderSize + h.stored_size;
    if (end > out.size())
      break;
    uint32_t crc = fmt::crc32c(0, &out[at], 12);
    crc = fmt::crc32c(crc, &out[at + fmt::kFrameHeaderSize], h.stored_size);
    fmt::put_le32(&out[at + 12], crc);
    at = end;
  }
  return out;
}

void report_on(const uint8_t* data, size_t size) {
  // The reader takes a path: give it an in-memory file.
  static const int fd = memfd_create("ebprof-fuzz", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
    return;
  try {
    namespace report = ebprof::report;
    // Every source: the input may be a merged file (major version 2).
    std::vector<report::Profile> sources = report::load_profiles(path);
    const report::Profile profile = report::summary_of(sources);
    // Names from the input alone: the files it names on this machine are
    // not the fuzzer's to open.
    report::SymbolizeOptions embedded_only;
    embedded_only.sources.symfs = "/nonexistent-symfs";
    std::vector<report::SymbolizedStack> stacks = report::symbolize(sources, embedded_only, true);
    std::vector<report::SymbolizedStack> merged = report::symbolize(sources, embedded_only, false);
    report::StackFilter focus{.user_only = true, .symbol = std::regex("a.*b")};
    report::filter_stacks(focus, merged);
    std::ostringstream sink;
    report::SampleFilter window;
    report::parse_time_window("0.5,", window);
    report::write_script(sink, path, sources, window, focus, embedded_only);
    report::write_folded(sink, merged);
    for (const report::Profile& p : sources)
      report::write_info(sink, p, report::unnamed_by_reason(stacks));
    report::write_top(sink, profile, stacks, {.rows = 0});
    report::write_folded(sink, stacks, {.pid = true, .annotate = true, .delimit = true});
    report::write_pprof(sink, profile, stacks);
    report::write_script(sink, path, sources, {}, {}, embedded_only);
    report::write_dump(sink, path);
    // Against itself: diff, and both flame graphs.
    const std::vector<report::DiffStack> joined =
        report::join_stacks(merged, stacks, report::Join::kAddress);
    report::write_diff_top(sink, profile, profile, joined, {0.5, 2}, report::Normalize::kTotal, 0);
    report::write_diff_folded(sink, joined, {0.5, 2});
    report::write_pprof_diff(sink, profile, merged, 0.3, stacks);
    report::write_flamegraph_html(sink, report::flame_stacks(joined, {0.5, 2}), {"x", true});
    report::write_flamegraph_svg(sink, report::flame_stacks(stacks), {});
    // And merged with itself, read back.
    static const std::string out = "/tmp/ebprof-fuzz-merge-" + std::to_string(getpid()) + ".data";
    report::merge_recordings(out, {path, path});
    report::load_profiles(out);
  } catch (const ebprof::Error&) {
    // Expected for unusable input; anything else escaping is a finding.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  report_on(data, size);
  std::vector<uint8_t> fixed = with_valid_checksums(data, size);
  report_on(fixed.data(), fixed.size());
  return 0;
}
