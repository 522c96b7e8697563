// libFuzzer target: any byte sequence as a recording, through everything a
// report does with a file from a stranger: every output format, per thread
// and merged, with filters and views, info, dump, a diff against itself,
// and a merge read back. Only a one-line Error may come out. Each input
// takes one of those reports, picked by its bytes, as it is and with its
// checksums made right: all of them for every input (some 25) ran at 17
// inputs a second, too slow to reach depth. frames_fuzzer covers the
// reader alone, faster still.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "fuzz/fuzz_input.h"
#include "report/load/merge.h"
#include "report/run/formats.h"
#include "report/run/plan.h"
#include "report/run/run.h"

namespace {

namespace report = ebprof::report;

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

// The reports, the same for every input (as_file's path is): made once.
const std::vector<report::ReportOptions>& reports(const std::string& path) {
  static const std::vector<report::ReportOptions> all = every_report(path);
  return all;
}

// Which report an input takes: a hash of its bytes, so that a mutation
// may move it to another; one past the reports is the merge.
size_t pick(const uint8_t* data, size_t size, size_t choices) {
  uint64_t h = 1469598103934665603u;  // FNV-1a
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 1099511628211u;
  return static_cast<size_t>(h % choices);
}

void report_on(const uint8_t* data, size_t size, size_t which) {
  const std::string& path = ebprof::fuzz::as_file(data, size);
  if (path.empty())
    return;
  const std::vector<report::ReportOptions>& all = reports(path);
  if (which < all.size()) {
    try {
      std::ostringstream sink;
      report::write_report(report::make_plan(all[which]), sink);
    } catch (const ebprof::Error&) {
      // Expected for unusable input; anything else escaping is a finding.
    }
    return;
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
  const std::string& path = ebprof::fuzz::as_file(data, size);
  const size_t which = pick(data, size, reports(path).size() + 1);
  report_on(data, size, which);
  std::vector<uint8_t> fixed = ebprof::fuzz::with_valid_checksums(data, size);
  report_on(fixed.data(), fixed.size(), which);
  return 0;
}
