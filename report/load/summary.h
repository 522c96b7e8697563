#pragma once

// What the load stage says of recordings as a whole: their durations,
// rates and losses, and the summary a report's header is written from.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/contents.h"
#include "report/load/recording.h"
#include "report/model/profile.h"

namespace ebprof::report {

// The summary of several recordings (several -i, a merged file): the
// first one's event and host (other hosts appended), their samples,
// durations and losses added up.
RecordingSummary summarize(std::span<const Recording> recordings);

// Seconds from the start of recording to its end (or its last sample, when
// the end frame is missing).
double duration_s(const Recording& recording);

// Whether `event` counts time (cpu-clock, task-clock): in nanoseconds.
bool is_clock_event(const std::string& event);

// What one sample stands for in its event's unit: the period (-c, or 1 for
// a probe or tracepoint), or for a clock event at -F the nanoseconds
// between samples; 0 when unknown (another event at -F, whose period the
// kernel adapts sample by sample).
uint64_t sample_weight(const format::RecordingInfo& info);

// What sample `s` of a recording stands for: an interval off CPU its
// length (ns); a sample on CPU the events of its period (1.10), else
// sample_weight(), else one.
uint64_t weight_of(const format::RecordingInfo& info, const format::Sample& s);

// Losses by cause over the whole recording: the end frame's totals, or the
// sum of the loss reports when the recorder was killed.
std::vector<format::LossCount> loss_totals(const Recording& recording);

}  // namespace ebprof::report
