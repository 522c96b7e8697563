#pragma once

#include <functional>
#include <span>
#include <string>

#include "format/contents.h"
#include "report/load/recording.h"
#include "report/load/sample_filter.h"
#include "report/load/settle.h"

namespace ebprof::report {

// One sample as the file holds it, with its key as load_recordings()
// counted it, and the recording it belongs to.
using SampleVisitor =
    std::function<void(const Recording&, const SampleKey&, const format::Sample&)>;

// Reads the samples of the file at `path` again, in file order, and hands
// each that `filter` keeps to `visit`: what a per-sample output needs,
// with memory bounded by what `recordings` (load_recordings() of the same
// file and filter, with `names`) hold, not by the samples. Each batch's
// keys are settled by `settle` as the load's were.
void stream_samples(const std::string& path, std::span<const Recording> recordings,
                    const SampleFilter& filter, NameTable& names, const SampleVisitor& visit,
                    const SettleStacks& settle = {});

}  // namespace ebprof::report
