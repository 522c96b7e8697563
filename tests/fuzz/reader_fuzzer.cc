// libFuzzer target: any byte sequence as a recording, through everything a
// report does with a file from a stranger: every output format, per thread
// and merged, with filters and views, info, dump, a diff against itself,
// and a merge read back. Only a one-line Error may come out.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "format/crc32c.h"
#include "format/framing.h"
#include "report/load/merge.h"
#include "report/run/formats.h"
#include "report/run/plan.h"
#include "report/run/run.h"

namespace {

namespace fmt = ebprof::format;
namespace report = ebprof::report;

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

// Reports on `path` as a user might ask for them.
std::vector<report::ReportOptions> every_report(const std::string& path) {
  report::ReportOptions base;
  base.inputs = {path};
  // Names from the input alone: the files it names on this machine are
  // not the fuzzer's to open.
  base.symfs = "/nonexistent-symfs";
  base.rows = 0;
  std::vector<report::ReportOptions> all;
  for (const report::FormatInfo& f : report::output_formats()) {
    report::ReportOptions o = base;
    o.format = f.name;
    all.push_back(o);
    o.sort = "pid,tid,cpu,state,symbol";
    o.view = "wall";
    o.wakers = true;
    o.annotate = o.delimit = true;
    o.prefix = "comm,pid";
    all.push_back(o);
    o = base;
    o.format = f.name;
    o.user_only = true;
    o.symbol = "a.*b";
    o.time = "0.5,";
    o.children = true;
    all.push_back(o);
  }
  for (report::Command c : {report::Command::kInfo, report::Command::kDump}) {
    report::ReportOptions o = base;
    o.command = c;
    all.push_back(o);
  }
  for (const char* format : {"top", "folded", "pprof", "svg"}) {
    report::ReportOptions o = base;
    o.command = report::Command::kDiff;
    o.inputs_given = false;
    o.files = {path, path};
    o.format = format;
    o.join = "address";
    all.push_back(o);
  }
  return all;
}

void report_on(const uint8_t* data, size_t size) {
  // The reader takes a path: give it an in-memory file.
  static const int fd = memfd_create("ebprof-fuzz", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
    return;
  for (const report::ReportOptions& o : every_report(path)) {
    try {
      std::ostringstream sink;
      report::write_report(report::make_plan(o), sink);
    } catch (const ebprof::Error&) {
      // Expected for unusable input; anything else escaping is a finding.
    }
  }
  try {
    // Merged with itself, read back.
    static const std::string out = "/tmp/ebprof-fuzz-merge-" + std::to_string(getpid()) + ".data";
    report::merge_recordings(out, {path, path});
    report::ReportOptions o;
    o.inputs = {out};
    o.symfs = "/nonexistent-symfs";
    std::ostringstream sink;
    report::write_report(report::make_plan(o), sink);
  } catch (const ebprof::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  report_on(data, size);
  std::vector<uint8_t> fixed = with_valid_checksums(data, size);
  report_on(fixed.data(), fixed.size());
  return 0;
}
