#pragma once

#include <string>
#include <string_view>

namespace ebprof::record {

// Reads a whole /proc or /sys file (their sizes are not known up front).
// Throws Error naming the file on failure.
std::string read_proc_file(const std::string& path);

// Like read_proc_file, but returns the errno instead of throwing (0 on success).
int try_read_proc_file(const std::string& path, std::string& out);

// Removes and returns the first line of `text` (without its newline).
std::string_view take_line(std::string_view& text);

}  // namespace ebprof::record
