#pragma once

// The source line of a CPython 3.11 frame, from its code object's location
// table (co_linetable), decoded at report time so that a fix here needs no
// new recording.

#include <cstdint>
#include <string_view>

namespace ebprof::report {

// The line of instruction `lasti` (in code units; negative before the
// first) of a code object starting at `first_line` with location table
// `table`; 0 where the table gives it none or ends before it.
int python_line(std::string_view table, uint32_t first_line, int32_t lasti);

}  // namespace ebprof::report
