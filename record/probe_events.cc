#include "record/probe_events.h"

#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>

#include "common/elf_file.h"
#include "common/error.h"
#include "record/privileges.h"

namespace ebprof::record {
namespace {

namespace fs = std::filesystem;

// Whether `path` exists; tracefs is root-only on many systems, and that is
// worth its own message rather than a filesystem exception.
bool present(const fs::path& path) {
  std::error_code ec;
  bool found = fs::exists(path, ec);
  if (ec && (ec.value() == EACCES || ec.value() == EPERM))
    throw missing_privileges("reading " + path.string());
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw Error("cannot read " + path.string() + ": " + ec.message());
  return found;
}

EventSpec tracepoint(const std::string& name, const std::string& spec) {
  size_t colon = spec.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size())
    throw Error("-e " + name + ": expected tracepoint:CATEGORY:NAME, e.g. sched:sched_switch");
  EventSpec e{EventSpec::Kind::kTracepoint, name, 0, 0, spec.substr(0, colon),
              spec.substr(colon + 1)};
  const fs::path events = tracefs() / "events";
  if (!present(events / e.group / e.target / "id")) {
    const bool group = present(events / e.group);
    throw Error("-e " + name + ": this kernel has no tracepoint " + spec + "; list " +
                (group ? "the " + e.group + " ones with ls " + (events / e.group).string()
                       : "the categories with ls " + events.string()));
  }
  return e;
}

EventSpec uprobe(const std::string& name, const std::string& spec) {
  // The symbol follows the last colon: paths may hold colons, symbols do not.
  size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size())
    throw Error("-e " + name + ": expected uprobe:PATH:SYMBOL, e.g. uprobe:/bin/bash:readline");
  std::error_code ec;
  fs::path path = fs::canonical(spec.substr(0, colon), ec);
  if (ec)
    throw Error("-e " + name + ": cannot find " + spec.substr(0, colon) + ": " + ec.message());
  try {
    read_elf_identity(path.string());
  } catch (const Error& err) {
    throw Error("-e " + name + ": " + err.what());
  }
  // The symbol is looked up when the probe is attached.
  return EventSpec{EventSpec::Kind::kUprobe, name, 0, 0, path.string(), spec.substr(colon + 1)};
}

EventSpec kprobe(const std::string& name, const std::string& symbol) {
  if (symbol.empty())
    throw Error("-e " + name + ": expected kprobe:SYMBOL, e.g. kprobe:do_sys_openat2");
  if (!present(tracefs() / "kprobe_events"))
    throw Error("-e " + name +
                ": this kernel has no kprobes (no kprobe_events in tracefs); take stacks on a "
                "tracepoint instead (-e tracepoint:CATEGORY:NAME)");
  return EventSpec{EventSpec::Kind::kKprobe, name, 0, 0, "", symbol};
}

}  // namespace

// Where tracefs is, mounting it at its usual place when it is nowhere: a
// fresh machine often has it unmounted, and libbpf needs it to attach.
std::filesystem::path tracefs() {
  for (const char* dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
    if (present(fs::path(dir) / "events"))
      return dir;
  if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0)
    return "/sys/kernel/tracing";
  throw Error(errno_message("tracefs is not mounted and mounting it failed", errno) +
              ": mount -t tracefs nodev /sys/kernel/tracing");
}

EventSpec find_probe_event(const std::string& name) {
  if (name.starts_with("uprobe:"))
    return uprobe(name, name.substr(7));
  if (name.starts_with("kprobe:"))
    return kprobe(name, name.substr(7));
  if (name.starts_with("tracepoint:"))
    return tracepoint(name, name.substr(11));
  return tracepoint(name, name);
}

}  // namespace ebprof::record
