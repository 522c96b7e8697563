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

struct FormatInfo {
  OutputFormat format;
  const char* name;  // as --format takes it
  const char* help;
  ProfileWriter write;    // null: the format prints samples one by one (script)
  DiffWriter write_diff;  // null: diff cannot write it
  bool weighs_time;       // counts may be time (--weight); pprof carries both side by side
  bool binary = false;    // not text: never written to a terminal
};

std::span<const FormatInfo> output_formats();
// Null for a name no format has.
const FormatInfo* find_format(std::string_view name);

}  // namespace ebprof::report
