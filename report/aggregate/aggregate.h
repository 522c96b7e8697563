#pragma once

// The aggregate stage: a report's recordings, counted by key as they were
// loaded, into the Profile writers take: keys merged as the grouping says,
// each stack named, blocked stacks given their state and waker, the stack
// filter applied, and counts put in the report's unit.

#include <span>

#include "report/aggregate/stack_filter.h"
#include "report/load/recording.h"
#include "report/model/profile.h"
#include "report/resolve/stack_resolver.h"

namespace ebprof::report {

struct AggregateOptions {
  Grouping grouping;
  const StackFilter* filter = nullptr;  // null: every stack, whole
  Unit unit = Unit::kSamples;
};

Profile aggregate(std::span<const Recording> recordings, const NameTable& names,
                  StackResolver& resolver, const AggregateOptions& options);

// The frames a report shows for `key`: its stack's, under a blocked one
// its state's root frame, with a waker known and grouped by the waker
// above it, as offwaketime draws it.
FrameView decorated_frames(const Recording& recording, const SampleKey& key, const NameTable& names,
                           StackResolver& resolver);

}  // namespace ebprof::report
