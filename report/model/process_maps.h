#pragma once

// The report's profile model, part 5: what a recording says each process
// had mapped, and the symbol tables it embeds for those binaries, with the
// lookups every stage makes in them (which capture was in effect, which
// mapping holds an address).

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/elf_file.h"
#include "format/contents.h"

namespace ebprof::report {

// Symbol tables embedded by recorders, by raw build-id: one map for every
// recording of a report, since a build-id names the same binary anywhere.
using EmbeddedTables = std::unordered_map<std::string, ElfSymbolTable>;

// Every maps capture of each pid, oldest first, mappings sorted by start.
using ProcessMaps = std::unordered_map<uint32_t, std::vector<format::ProcessInfo>>;

// The index of the latest capture of `pid` taken at or before `time_ns`
// (the first one when all are later): the maps in effect for a sample.
uint32_t capture_at(const ProcessMaps& maps, uint32_t pid, uint64_t time_ns);

// The captures of `pid` from `capture` (the one in effect) on: what its
// addresses are looked up in (empty when the process was never captured).
std::span<const format::ProcessInfo> captures_from(const ProcessMaps& maps, uint32_t pid,
                                                   uint32_t capture);

// The mapping holding `address` in the first of `captures` that maps it: the
// capture in effect at a sample's time, then later ones (code mapped after
// that capture: start-up libraries, dlopen).
const format::Mapping* mapping_in(std::span<const format::ProcessInfo> captures, uint64_t address);

}  // namespace ebprof::report
