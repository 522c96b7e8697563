#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace ebprof::record {

// Reads a whole /proc or /sys file (their sizes are not known up front).
// Throws Error naming the file on failure.
std::string read_proc_file(const std::string& path);

// Like read_proc_file, but returns the errno instead of throwing (0 on success).
int try_read_proc_file(const std::string& path, std::string& out);

// Calls `each` with every line of a /proc or /sys file (without its
// newline), reading it a piece at a time: for files of megabytes
// (/proc/kallsyms) that need not be held whole. Throws Error naming the
// file on failure.
void read_proc_lines(const std::string& path, const std::function<void(std::string_view)>& each);

// Removes and returns the first line of `text` (without its newline).
std::string_view take_line(std::string_view& text);

}  // namespace ebprof::record
