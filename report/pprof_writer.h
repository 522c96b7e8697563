#pragma once

#include <ostream>
#include <vector>

#include "report/profile.h"
#include "report/symbolizer.h"

namespace ebprof::report {

// Writes `stacks` as a gzip-compressed pprof profile (profile.proto), what
// go tool pprof, Pyroscope and other pprof readers take. Sample types are
// samples/count and cpu/nanoseconds (events/count for events that are not
// clocks); each sample is labelled with pid, tid, comm and cpu. Every frame
// is symbolized already: each binary is one mapping with its build-id, each
// (binary, address, name) one location, each name one function with its
// mangled system name.
void write_pprof(std::ostream& out, const Profile& profile,
                 const std::vector<SymbolizedStack>& stacks);

}  // namespace ebprof::report
