#include "report/locate/file_finder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "common/boot_id.h"
#include "common/error.h"
#include "common/perf_map.h"
#include "common/text.h"
#include "report/locate/debuginfo.h"

namespace ebprof::report {
namespace {

using Outcome = FileAttempt::Outcome;
using Source = FileAttempt::Source;

// objcopy --only-keep-debug empties the loadable segments: a debuginfo file
// alone cannot turn a mapping's file offset into an address.
bool has_file_offsets(const ElfSymbolTable& t) {
  return std::any_of(t.segments().begin(), t.segments().end(),
                     [](const LoadSegment& s) { return s.file_size > 0 && s.offset > 0; });
}

Outcome compare(const ElfSymbolTable* file, const std::string& build_id) {
  if (!file)
    return Outcome::kMissing;
  if (file->identity().build_id != build_id)
    return Outcome::kOtherBuild;
  return build_id.empty() ? Outcome::kUnverified : Outcome::kMatches;
}

bool usable(Outcome o) {
  return o == Outcome::kMatches || o == Outcome::kUnverified;
}

}  // namespace

FileFinder::FileFinder(SymbolizeOptions options) : options_(std::move(options)) {}

const ElfSymbolTable* FileFinder::open(const std::string& path) {
  auto [it, inserted] = files_.try_emplace(path);
  if (inserted) {
    try {
      it->second = std::make_unique<ElfSymbolTable>(ElfSymbolTable::load(path));
    } catch (const Error&) {
      // Missing, not ELF, not a regular file: the attempt says "missing".
    }
  }
  return it->second.get();
}

// The file on this machine must be the build that ran: a rebuild, an
// upgrade or another machine's copy would name the wrong functions. Its
// build-id must equal the recorded one. A binary built without one (Go,
// --build-id=none) cannot be verified: it is used, as perf would, but said
// so once, since only the user can know it was not rebuilt. A deleted file
// is never on disk; its embedded table still names it.
void FileFinder::find_binary(const format::Mapping& m, OnDisk& found) {
  const std::string path = binary_path(options_.sources, m.path);
  if (m.path.ends_with(" (deleted)")) {
    found.attempts.push_back({Source::kBinary, Outcome::kDeleted, path});
    return;
  }
  const ElfSymbolTable* file = open(path);
  const Outcome outcome = compare(file, m.build_id);
  found.attempts.push_back({Source::kBinary, outcome, path});
  if (usable(outcome)) {
    found.binary_table = file;
    found.binary = path;
  }
  if (!options_.warn)
    return;
  if (outcome == Outcome::kOtherBuild)
    options_.warn(path + " is not the build that was recorded (build-id " +
                  hex_bytes(file->identity().build_id) + ", recorded " + hex_bytes(m.build_id) +
                  "): not used for its names");
  if (outcome == Outcome::kUnverified)
    options_.warn(path +
                  " has no build-id: its names are used unverified; if it was rebuilt "
                  "since recording, they may be wrong");
}

const ElfSymbolTable* FileFinder::local_debuginfo(const format::Mapping& m, OnDisk* found) {
  for (const std::string& path :
       debuginfo_paths(options_.sources, m.path, m.build_id, m.debuglink)) {
    const ElfSymbolTable* file = open(path);
    const Outcome outcome = compare(file, m.build_id);
    if (found)
      found->attempts.push_back({Source::kDebuginfo, outcome, path});
    if (usable(outcome)) {
      if (found)
        found->dwarf = path;
      return file;
    }
  }
  return nullptr;
}

// Separate debuginfo holds the full .symtab (local functions included),
// which a stripped binary and the embedded table lack. Only with a known
// build-id: a debuglink name alone proves nothing.
const ElfSymbolTable* FileFinder::find_debuginfo(const format::Mapping& m, OnDisk& found) {
  if (m.build_id.empty())
    return nullptr;
  if (const ElfSymbolTable* file = local_debuginfo(m, &found))
    return file;
  // Last, and only when nothing local has it: a server, which may be slow.
  if (!options_.debuginfod)
    return nullptr;
  std::string fetched;
  if (auto asked = requested_.find(m.build_id); asked != requested_.end() && asked->second) {
    fetched = options_.debuginfod(m.build_id);  // asked already: the answer
  } else if (debuginfod_queries_ < kMaxDebuginfodQueries) {
    ++debuginfod_queries_;
    fetched = options_.debuginfod(m.build_id);
  }
  const ElfSymbolTable* file = fetched.empty() ? nullptr : open(fetched);
  const Outcome outcome = fetched.empty() ? Outcome::kNoAnswer : compare(file, m.build_id);
  found.attempts.push_back({Source::kDebuginfod, outcome, fetched});
  if (!usable(outcome))
    return nullptr;
  found.dwarf = fetched;
  return file;
}

bool FileFinder::request(const format::Mapping& m) {
  if (!options_.debuginfod_request || m.build_id.empty())
    return false;
  auto [it, inserted] = requested_.try_emplace(m.build_id, false);
  if (!inserted)
    return it->second;
  if (local_debuginfo(m, nullptr) || debuginfod_queries_ >= kMaxDebuginfodQueries)
    return false;
  ++debuginfod_queries_;
  options_.debuginfod_request(m.build_id);
  return it->second = true;
}

const FileFinder::OnDisk& FileFinder::locate(const format::Mapping& m) {
  auto [it, inserted] = on_disk_.try_emplace({m.path, m.build_id});
  OnDisk& found = it->second;
  if (inserted) {
    find_binary(m, found);
    found.debug = find_debuginfo(m, found);
    if (!found.debug && found.binary_table)
      found.dwarf = found.binary;
  }
  return found;
}

const std::string& FileFinder::dwarf_of(const format::Mapping& m) {
  return locate(m).dwarf;
}

const FoundBinary& FileFinder::find(const format::Mapping& m, const EmbeddedTables& tables) {
  auto [it, inserted] = found_.try_emplace({m.path, m.build_id, &tables});
  FoundBinary& f = it->second;
  if (!inserted)
    return f;
  const OnDisk& disk = locate(m);
  f.attempts = disk.attempts;
  f.dwarf = disk.dwarf;
  f.binary = disk.binary;
  auto embedded = m.build_id.empty() ? tables.end() : tables.find(m.build_id);
  if (embedded != tables.end())
    f.embedded = &embedded->second;
  f.layout = disk.binary_table ? disk.binary_table : f.embedded;
  f.symbols = disk.debug ? disk.debug : f.layout;
  if (!f.layout && disk.debug && has_file_offsets(*disk.debug))
    f.layout = disk.debug;
  if (!f.symbols || !f.layout) {
    f.symbols = f.layout = nullptr;
    f.missing = disk.attempts.front().outcome == Outcome::kOtherBuild
                    ? UnnamedReason::kBuildIdMismatch
                    : UnnamedReason::kBinaryNotFound;
  }
  return f;
}

const ElfSymbolTable* FileFinder::binary_of(const format::Mapping& m, std::string& path) {
  const OnDisk& disk = locate(m);
  path = disk.binary;
  return disk.binary_table;
}

const std::vector<ElfSymbol>* FileFinder::left_perf_map(const format::ProcessInfo& process,
                                                        const format::RecordingInfo& info) {
  static const std::string boot = this_boot_id();
  if (info.boot_id.empty() || info.boot_id != boot ||
      (process.place.namespace_pid && process.place.namespace_pid != process.pid) ||
      (!process.place.root.empty() && process.place.root != "/"))
    return nullptr;
  auto [it, inserted] = left_maps_.try_emplace({info.start_realtime_ns, process.pid});
  if (inserted) {
    const std::string path = perf_map_path(process.pid);
    struct stat st {};
    std::string text;
    off_t size = -1;
    // Written before the recording began, it is another process's of
    // that pid, or a stale one: never a wrong name.
    if (lstat(path.c_str(), &st) == 0 &&
        uint64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec >=
            info.start_realtime_ns &&
        read_perf_map_at(path, geteuid(), size, text)) {
      it->second = parse_perf_map(text);
      if (options_.warn)
        options_.warn(path + " names process " + std::to_string(process.pid) +
                      "'s JIT code: the recording holds no map for it, and this is the boot it "
                      "was made in");
    }
  }
  return it->second ? &*it->second : nullptr;
}

}  // namespace ebprof::report
