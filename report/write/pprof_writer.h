#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "report/model/profile.h"

namespace ebprof::report {

// Which labels each pprof sample carries (--labels): fewer labels, fewer
// distinct samples, which backends count against their limits.
struct PprofLabels {
  bool pid = true, tid = true, comm = true, cpu = true, cgroup = true;
};

// Writes `profile` as a gzip-compressed pprof profile (profile.proto), what
// go tool pprof, Pyroscope and other pprof readers take. Sample types are
// samples/count and cpu/nanoseconds (events/count for events that are not
// clocks), off_cpu/nanoseconds with intervals off CPU; each sample is
// labelled with pid, tid, comm, cpu and its cgroup v2 path where it has
// one (those of `labels`). Every frame is symbolized already:
// each binary is one mapping with its build-id, each (binary, address,
// name) one location, each name one function with its mangled system name.
void write_pprof(std::ostream& out, const Profile& profile, PprofLabels labels = {});

// One profile of the difference NEW minus BASE, the way go tool pprof's
// -diff_base builds it: NEW's samples as they are, BASE's with negated
// values, scaled into NEW's units (`base_in_new` per base sample), each
// labelled side=new or side=base. `go tool pprof -top FILE` then lists
// each function's change; -tagfocus=side=new shows one side alone.
void write_pprof_diff(std::ostream& out, const Profile& base, double base_in_new,
                      const Profile& now);

}  // namespace ebprof::report
