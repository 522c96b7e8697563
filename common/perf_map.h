#pragma once

#include <sys/types.h>

#include <cstdint>
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

// /tmp/perf-PID.map: where a process whose pid is `pid` in its own
// namespace writes its map.
std::string perf_map_path(uint32_t pid);

// The text of the perf map open at `fd`, if it is one to trust: a regular
// file (not a FIFO that blocks, not a device that never ends), owned by
// root or `uid`, at most 64 MiB; `size` is its size when last read (-1:
// never), and nothing is read when it has not changed.
bool read_perf_map_file(const UniqueFd& fd, uid_t uid, off_t& size, std::string& text);

// The same of the perf map at `path` in this process's own file system,
// opened never through a link nor blocking on a FIFO.
bool read_perf_map_at(const std::string& path, uid_t uid, off_t& size, std::string& text);

}  // namespace ebprof
