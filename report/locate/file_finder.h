#pragma once

// Finding the files that name a recorded binary's frames: the binary at
// its recorded path (under --symfs), separate debuginfo by build-id and
// .gnu_debuglink, a debuginfod server, the table the recording embeds.
// Reading them is user_names.h's job.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/elf_file.h"
#include "format/contents.h"
#include "report/locate/options.h"
#include "report/model/frame.h"
#include "report/model/process_maps.h"

namespace ebprof::report {

// One place a binary's symbols were looked for, and what was there.
struct FileAttempt {
  enum class Source : uint8_t { kBinary, kDebuginfo, kDebuginfod };
  enum class Outcome : uint8_t {
    kMatches,     // the recorded build-id: used
    kUnverified,  // no build-id to compare (neither recorded nor in the file): used, warned
    kOtherBuild,  // another build-id: never used
    kMissing,     // no readable ELF file there
    kDeleted,     // the recorded path says the file was deleted while mapped
    kNoAnswer,    // the servers had nothing, or the report asked them enough already
  };
  Source source = Source::kBinary;
  Outcome outcome = Outcome::kMissing;
  std::string path;  // the server's answer for kDebuginfod, "" when none
};

// The files found for one mapped binary.
struct FoundBinary {
  const ElfSymbolTable* symbols =
      nullptr;                             // names: debuginfo first, else the binary, else embedded
  const ElfSymbolTable* layout = nullptr;  // load segments: the binary, else embedded
  const ElfSymbolTable* embedded = nullptr;  // the recording's own table, if any
  std::string dwarf;                         // the file to read DWARF from, if any
  std::string binary;                        // the file that ran, when it is on disk
  // kBinaryNotFound or kBuildIdMismatch when there are no tables at all.
  UnnamedReason missing = UnnamedReason::kNone;
  std::vector<FileAttempt> attempts;  // in the order they were made
};

// Looks for each (path, build-id) once, whichever recording's tables name
// it, and opens each file once.
class FileFinder {
 public:
  explicit FileFinder(SymbolizeOptions options);

  // `embedded` are the tables of the recording the mapping is from.
  const FoundBinary& find(const format::Mapping& mapping, const EmbeddedTables& embedded);

  // The file to read `mapping`'s DWARF from, if any (as find() gives it:
  // what the recording embeds has none).
  const std::string& dwarf_of(const format::Mapping& mapping);

  // The file that ran `mapping`, when this machine has that build (else
  // null), with its path in `path`: what an unwinder reads call frame
  // information and load segments from. Unlike find(), it needs no
  // recording's tables, so it can answer while they are still being read.
  const ElfSymbolTable* binary_of(const format::Mapping& mapping, std::string& path);

  // Asks the debuginfod servers for `mapping`'s debuginfo now, without
  // waiting, when nothing local has it: find() takes the answer later.
  // True when it did (or had): the binary's debuginfo is the servers' to give.
  bool request(const format::Mapping& mapping);

  // The JIT map /tmp/perf-PID.map that `process` of a recording made in
  // this boot of this machine (`info`'s boot id) left here, written after
  // the recording began, by root or the report's user: a JVM with
  // -XX:+DumpPerfMapAtExit writes its map as it exits, after a recorder
  // stopped reading. Not for a process in a container (its /tmp and pid
  // are its own). Null when there is none; each one used is said once.
  const std::vector<ElfSymbol>* left_perf_map(const format::ProcessInfo& process,
                                              const format::RecordingInfo& info);

 private:
  // What this machine, and the servers, have for one (path, build-id).
  struct OnDisk {
    const ElfSymbolTable* binary_table = nullptr;  // the binary, when usable
    const ElfSymbolTable* debug = nullptr;         // separate debuginfo
    std::string binary;                            // its path
    std::string dwarf;
    std::vector<FileAttempt> attempts;  // the binary first
  };
  const OnDisk& locate(const format::Mapping& m);
  const ElfSymbolTable* open(const std::string& path);
  void find_binary(const format::Mapping& m, OnDisk& found);
  // The first local debuginfo file of the recorded build; with `found`,
  // every candidate tried is an attempt.
  const ElfSymbolTable* local_debuginfo(const format::Mapping& m, OnDisk* found);
  const ElfSymbolTable* find_debuginfo(const format::Mapping& m, OnDisk& found);

  SymbolizeOptions options_;
  // Each query can take seconds, and a recording decides how many build-ids
  // there are: a report asks servers about so many binaries at most.
  static constexpr int kMaxDebuginfodQueries = 200;
  int debuginfod_queries_ = 0;
  std::unordered_map<std::string, std::unique_ptr<ElfSymbolTable>> files_;  // null: unreadable
  std::map<std::pair<std::string, std::string>, OnDisk> on_disk_;           // by (path, build-id)
  // By (path, build-id, embedded tables).
  std::map<std::tuple<std::string, std::string, const EmbeddedTables*>, FoundBinary> found_;
  std::map<std::string, bool> requested_;  // by build-id: whether the servers were asked
  // By (recording start, pid): empty when there is none to use.
  std::map<std::pair<uint64_t, uint32_t>, std::optional<std::vector<ElfSymbol>>> left_maps_;
};

}  // namespace ebprof::report
