#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/elf_file.h"
#include "common/unique_fd.h"

namespace ebprof {

// perf's JIT symbol map format, as V8, the JVM (-XX:+DumpPerfMapAtExit,
// jcmd PID Compiler.perfmap), LuaJIT and others write /tmp/perf-PID.map:
// "START SIZE NAME" per line, START and SIZE in hex (with or without 0x),
// NAME to the end of the line. Malformed lines are skipped; the result is
// sorted by address.
std::vector<ElfSymbol> parse_perf_map(std::string_view text);

// The text of the perf map open at `fd`, if it is one to trust: a regular
// file (not a FIFO that blocks, not a device that never ends), owned by
// root or `uid`, at most 64 MiB; `size` is its size when last read (-1:
// never), and nothing is read when it has not changed.
bool read_perf_map_file(const UniqueFd& fd, uid_t uid, off_t& size, std::string& text);

}  // namespace ebprof
