#include "report/locate/file_finder.h"

#include <algorithm>

#include "common/error.h"
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
void FileFinder::find_binary(const format::Mapping& m, FoundBinary& found) {
  const std::string path = binary_path(options_.sources, m.path);
  if (m.path.ends_with(" (deleted)")) {
    found.attempts.push_back({Source::kBinary, Outcome::kDeleted, path});
    return;
  }
  const ElfSymbolTable* file = open(path);
  const Outcome outcome = compare(file, m.build_id);
  found.attempts.push_back({Source::kBinary, outcome, path});
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

// Separate debuginfo holds the full .symtab (local functions included),
// which a stripped binary and the embedded table lack. Only with a known
// build-id: a debuglink name alone proves nothing.
const ElfSymbolTable* FileFinder::find_debuginfo(const format::Mapping& m, FoundBinary& found) {
  if (m.build_id.empty())
    return nullptr;
  for (const std::string& path :
       debuginfo_paths(options_.sources, m.path, m.build_id, m.debuglink)) {
    const ElfSymbolTable* file = open(path);
    const Outcome outcome = compare(file, m.build_id);
    found.attempts.push_back({Source::kDebuginfo, outcome, path});
    if (usable(outcome)) {
      found.dwarf = path;
      return file;
    }
  }
  // Last, and only when nothing local has it: a server, which may be slow.
  if (!options_.debuginfod)
    return nullptr;
  std::string fetched;
  if (debuginfod_queries_ < kMaxDebuginfodQueries) {
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
  for (const std::string& path : debuginfo_paths(options_.sources, m.path, m.build_id, m.debuglink))
    if (usable(compare(open(path), m.build_id)))
      return false;
  if (requested_.size() > kMaxDebuginfodQueries)
    return false;
  options_.debuginfod_request(m.build_id);
  return it->second = true;
}

const FoundBinary& FileFinder::find(const format::Mapping& m, const EmbeddedTables& tables) {
  auto [it, inserted] = found_.try_emplace({m.path, m.build_id, &tables});
  FoundBinary& f = it->second;
  if (!inserted)
    return f;
  find_binary(m, f);
  const FileAttempt binary = f.attempts.front();
  const ElfSymbolTable* on_disk = usable(binary.outcome) ? open(binary.path) : nullptr;
  const ElfSymbolTable* debug = find_debuginfo(m, f);
  auto embedded = m.build_id.empty() ? tables.end() : tables.find(m.build_id);
  if (embedded != tables.end())
    f.embedded = &embedded->second;
  f.layout = on_disk ? on_disk : f.embedded;
  f.symbols = debug ? debug : f.layout;
  if (on_disk)
    f.binary = binary.path;
  if (!debug && on_disk)
    f.dwarf = binary.path;
  if (!f.layout && debug && has_file_offsets(*debug))
    f.layout = debug;
  if (!f.symbols || !f.layout) {
    f.symbols = f.layout = nullptr;
    f.missing = binary.outcome == Outcome::kOtherBuild ? UnnamedReason::kBuildIdMismatch
                                                       : UnnamedReason::kBinaryNotFound;
  }
  return f;
}

}  // namespace ebprof::report
