#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "format/contents.h"
#include "record/elf_identities.h"

namespace ebprof::record {

// Executable mappings of /proc/PID/maps-formatted `text`, in file order
// (ascending). Only executable mappings can hold a sampled instruction
// pointer, so the others are not kept.
std::vector<format::Mapping> parse_proc_maps(std::string_view text);

// comm and executable mappings of process `pid` as /proc shows them now,
// each with the identity of its file. When they cannot be read (the process
// exited, permissions), maps_error says why.
format::ProcessInfo read_process(uint32_t pid, uint64_t now_ns, ElfIdentities& identities);

// The process (thread group) that thread or process `id` belongs to, or
// nullopt when there is no such task.
std::optional<uint32_t> read_tgid(uint32_t id);

// The pid and mount namespaces, pid inside its namespace and root of process
// `pid`; what cannot be read (the process is gone) stays zero or empty.
format::ProcessPlace read_place(uint32_t pid);

// The last number of the "NStgid:" line of /proc/PID/status text: the
// process's pid as its own (innermost) pid namespace numbers it.
uint32_t parse_namespace_pid(std::string_view status);

}  // namespace ebprof::record
