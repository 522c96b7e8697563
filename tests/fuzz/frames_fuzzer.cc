// libFuzzer target: any byte sequence as a recording, through the reader
// and the load stage alone (framing, checksums, resynchronisation, zstd
// and Cap'n Proto decoding, id and size checks, the recording built from
// them, windows settled and let go as they stream), as given and with
// every checksum made right: fast, where reader_fuzzer's whole reports run
// tens of inputs a second. Only a one-line Error may come out.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/error.h"
#include "fuzz/fuzz_input.h"
#include "report/load/load.h"

namespace {

using namespace ebprof;

// Settles windows as a report would, minus the unwinding: a window whose
// blocks are all there stands for its even neighbour (the load then lets
// go of windows as it streams; a sanitizer sees any read of one let go).
void settle(const report::Recording& r, const report::IdRuns<format::UserWindow>& windows,
            std::span<report::StackRef> refs) {
  for (report::StackRef& ref : refs) {
    const format::UserWindow* w = windows.find(ref.window);
    if (w && std::all_of(w->blocks.begin(), w->blocks.end(),
                         [&](uint32_t block) { return r.blocks.find(block) != nullptr; }))
      ref.window &= ~1u;
  }
}

void read(const uint8_t* data, size_t size) {
  const std::string& path = ebprof::fuzz::as_file(data, size);
  if (path.empty())
    return;
  try {
    ebprof::report::NameTable names;
    std::vector<ebprof::report::Recording> recordings;
    ebprof::report::load_recordings(path, {}, names, recordings, settle);
  } catch (const ebprof::Error&) {
    // Expected for unusable input; anything else escaping is a finding.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  read(data, size);
  const std::vector<uint8_t> fixed = ebprof::fuzz::with_valid_checksums(data, size);
  read(fixed.data(), fixed.size());
  return 0;
}
