// libFuzzer target: any byte sequence as a recording, through the reader
// and the load stage alone (framing, checksums, resynchronisation, zstd
// and Cap'n Proto decoding, id and size checks, the recording built from
// them), as given and with every checksum made right: fast, where
// reader_fuzzer's whole reports run tens of inputs a second. Only a
// one-line Error may come out.
#include <cstdint>
#include <vector>

#include "common/error.h"
#include "fuzz/fuzz_input.h"
#include "report/load/recording.h"

namespace {

void read(const uint8_t* data, size_t size) {
  const std::string& path = ebprof::fuzz::as_file(data, size);
  if (path.empty())
    return;
  try {
    ebprof::report::CommTable comms;
    std::vector<ebprof::report::Recording> recordings;
    ebprof::report::load_recordings(path, {}, comms, recordings);
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
