#pragma once

#include <functional>
#include <string>

#include "report/locate/debuginfo.h"

namespace ebprof::report {

struct SymbolizeOptions {
  SymbolSources sources;
  bool demangle = true;
  bool lines = false;  // append "file.cc:123" to names that DWARF places (--lines)
  // Functions inlined at an address as frames of their own, from DWARF
  // (--no-inline turns it off, like perf's: then DWARF is read only for
  // --lines, and ELF symbols alone name frames, as in perf script).
  bool inline_frames = true;
  // Where compressed debuginfo is kept inflated for later reports
  // (--cache-dir); "" for nowhere (--no-cache).
  std::string cache_dir;
  // Told once per binary found on disk whose build-id is not the recorded
  // one (a rebuild, an upgrade): it is never used for names.
  std::function<void(const std::string& message)> warn;
  // Asked for debuginfo found nowhere locally (DEBUGINFOD_URLS); may be null.
  // Returns a local path or "" (Debuginfod::find_debuginfo, or a fake).
  std::function<std::string(const std::string& build_id)> debuginfod;
  // Told of debuginfo a report will want from the servers, for them to be
  // asked all at once, ahead; may be null.
  std::function<void(const std::string& build_id)> debuginfod_request;
};

}  // namespace ebprof::report
