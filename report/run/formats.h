#pragma once

// The output formats a report writes, one table entry each: its name for
// --format, its writers, and what it needs of the stages before them.
// Adding a format is a writer in write/ and an entry here.

#include <cstdint>
#include <ostream>
#include <span>
#include <string_view>

#include "report/model/profile.h"

namespace ebprof::report {

struct Plan;

enum class OutputFormat : uint8_t { kTop, kFolded, kScript, kPprof, kFlamegraph, kSvg };

using ProfileWriter = void (*)(std::ostream& out, const Profile& profile, const Plan& plan);
using DiffWriter = void (*)(std::ostream& out, const Profile& base, const Profile& now,
                            const Plan& plan);

// How an output shows what tells samples apart beyond their stacks and
// commands (threads, CPUs, cgroups): what the report must keep apart for it.
enum class ShowsKeys : uint8_t {
  kNo,
  kAsLabels,   // a label of each sample, as --labels chooses (pprof)
  kAsColumns,  // a column of the table, as --sort chooses (top)
};

// What a format is: its writers and what it asks of the stages before
// them. The run and the plan ask a format's row, never its name.
struct FormatInfo {
  OutputFormat format;
  const char* name;  // as --format takes it
  const char* help;
  ProfileWriter write;    // null: it writes every sample as it is read (streams_samples)
  DiffWriter write_diff;  // null: diff cannot write it
  bool weighs_time;       // counts may be time (--weight); pprof carries both side by side
  bool binary = false;    // not text: never written to a terminal
  ShowsKeys shows_keys = ShowsKeys::kNo;
  bool call_tree = false;        // draws call paths under its rows (--call-graph)
  bool redraws = false;          // --follow redraws it as the recording grows
  bool streams_samples = false;  // one line per sample, each named as it is read
  // --split: one file per slice of wall-clock time, named for its start
  // with this ending, into a directory; null: it cannot be split.
  const char* slice_extension = nullptr;
};

std::span<const FormatInfo> output_formats();
// Null for a name no format has.
const FormatInfo* find_format(std::string_view name);

}  // namespace ebprof::report
