#pragma once

// The load stage: a recording file read frame by frame into Recordings,
// its samples keyed and counted as they stream past, each batch's stacks
// settled on the way (load/settle.h).

#include <span>
#include <string>
#include <vector>

#include "report/load/recording.h"
#include "report/load/sample_filter.h"
#include "report/load/settle.h"

namespace ebprof::report {

// Reads the recording at `path`, counting the samples `filter` keeps: one
// recording, or one per input of a file `ebprof-report merge` wrote,
// appended to `out`, numbered from `first_index` + out.size() (Recording::
// index: what tells the stacks of a report's recordings apart). Comms and cgroup paths go into
// `names`; each batch's keys are settled by `settle` once the maps
// captures they may need have been read, and windows no later sample can
// use are let go (in a recording that says how far back samples reach).
// Throws Error when the file cannot be read at all.
void load_recordings(const std::string& path, const SampleFilter& filter, NameTable& names,
                     std::vector<Recording>& out, const SettleStacks& settle = {},
                     uint32_t first_index = 0);

// Every source of every input, in order, numbered from `first_index`,
// sharing one embedded-symbol map (two recordings of one binary embed the
// symbols each sampled).
std::vector<Recording> load_all(std::span<const std::string> paths, const SampleFilter& filter,
                                NameTable& names, const SettleStacks& settle = {},
                                uint32_t first_index = 0);

}  // namespace ebprof::report
