#pragma once

#include "record/options.h"

namespace ebprof::record {

// One recording from start to finish: checks the targets, loads and attaches
// BPF, runs the workload, streams samples to the file until the duration
// passes, the workload or every target exits, or SIGINT/SIGTERM arrives.
// Prints a one-line summary to stderr. Throws Error on failure. Returns
// the exit status, as perf's: a workload's own (128 + the signal that
// killed it), 0 when the recording was stopped.
int run_session(const RecordOptions& options);

}  // namespace ebprof::record
