#include "report/load/merge.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string_view>

#include <set>
#include <unordered_map>

#include "common/error.h"
#include "common/output_file.h"
#include "format/reader.h"
#include "format/writer.h"

namespace ebprof::report {
namespace {

// Copies one input's frames to the merged file, a Source frame before each
// of its sources: a recording is one source, a merged input one per source
// it holds, as the reader numbers them (FrameInfo::source).
class Merger : public format::RecordingVisitor {
 public:
  explicit Merger(format::RecordingWriter& out) : out_(out) {}

  void begin(const std::string& input) {
    input_ = input;
    version_ = format::read_version(input);
    started_ = false;
  }
  uint64_t sources() const { return next_index_; }
  uint64_t samples() const { return samples_; }
  uint64_t unknown_frames() const { return unknown_frames_; }

  void on_frame(const format::FrameInfo& frame) override {
    if (std::string_view(frame.kind) == "unknown")
      ++unknown_frames_;
    if (!started_ || frame.source != source_) {
      started_ = true;
      source_ = frame.source;
      pending_ = format::Source{0, input_, version_.first, version_.second};
      source_written_ = false;
    }
  }
  void on_source(format::Source&& source) override {
    if (!source.path.empty())
      pending_.path = input_ + " > " + source.path;
    pending_.version_major = source.version_major;
    pending_.version_minor = source.version_minor;
  }
  void on_info(format::RecordingInfo&& info) override { write(info); }
  void on_kernel_symbols(std::vector<format::KernelSymbol>&& symbols) override { write(symbols); }
  void on_process(format::ProcessInfo&& process) override { write(process); }
  void on_samples(format::SampleBatch&& batch) override {
    samples_ += batch.samples.size();
    write(batch);
  }
  void on_end(format::RecordingEnd&& end) override { write(end); }
  void on_losses(format::Losses&& losses) override { write(losses); }
  void on_jit_symbols(format::JitSymbols&& symbols) override { write(symbols); }
  void on_python_code(format::PythonCode&& code) override { write(code); }
  // A binary's unwinding tables, like its symbols, once per build-id: a
  // whole table once, or each piece once, unless the whole table went out.
  void on_elf_cfi(format::ElfCfi&& cfi) override {
    if (whole_cfi_written_.contains(cfi.build_id))
      return;
    if (!cfi.eh_frame.empty()) {
      whole_cfi_written_.insert(cfi.build_id);
      write(cfi);
      return;
    }
    std::set<uint64_t>& written = cfi_pieces_written_[cfi.build_id];
    std::erase_if(cfi.pieces,
                  [&](const format::CfiPiece& p) { return !written.insert(p.offset).second; });
    if (!cfi.pieces.empty())
      write(cfi);
  }

  // Hourly recordings of one host embed the same binaries over and over:
  // only symbols not yet written for a build-id go out.
  void on_elf_symbols(format::EmbeddedSymbols&& e) override {
    auto it = written_.find(e.build_id);
    const bool first = it == written_.end();
    if (first)
      it = written_.emplace(e.build_id, std::set<uint64_t>{}).first;
    std::set<uint64_t>& written = it->second;
    std::erase_if(e.symbols, [&](const ElfSymbol& s) { return !written.insert(s.address).second; });
    if (!first && e.symbols.empty())
      return;
    if (!first)
      e.segments.clear();  // the reader keeps the first frame's layout
    write(e);
  }

 private:
  // The source's Source frame goes out with its first content frame.
  template <typename T>
  void write(const T& frame) {
    if (!source_written_) {
      pending_.index = static_cast<uint32_t>(next_index_++);
      out_.write(pending_);
      source_written_ = true;
    }
    out_.write(frame);
  }

  format::RecordingWriter& out_;
  std::string input_;
  std::pair<uint16_t, uint16_t> version_;
  bool started_ = false;
  uint32_t source_ = 0;
  format::Source pending_;
  bool source_written_ = false;
  uint64_t next_index_ = 0;
  uint64_t samples_ = 0;
  uint64_t unknown_frames_ = 0;
  std::unordered_map<std::string, std::set<uint64_t>> written_;
  std::set<std::string> whole_cfi_written_;
  std::unordered_map<std::string, std::set<uint64_t>> cfi_pieces_written_;  // offsets
};

}  // namespace

MergeResult merge_recordings(const std::string& output, const std::vector<std::string>& inputs) {
  MergeResult result;
  // Written beside the output and renamed over it at the end: a merge that
  // fails leaves an existing output as it was.
  ReplacingFile file(output, "-o");
  format::RecordingWriter writer =
      format::RecordingWriter::create(file.take_fd(), output, {.merged = true});
  Merger merger(writer);
  for (const std::string& input : inputs) {
    merger.begin(input);
    format::ReadResult r = format::read_recording(input, merger);
    if (!r.warning.empty())
      result.warnings.push_back(r.warning);
  }
  if (merger.unknown_frames())
    result.warnings.push_back(std::to_string(merger.unknown_frames()) +
                              " frames of a newer format version were left out: merge with "
                              "the newer ebprof to keep them");
  writer.write(format::MergeEnd{static_cast<uint32_t>(merger.sources())});
  writer.close();
  file.commit();
  result.sources = merger.sources();
  result.samples = merger.samples();
  return result;
}

}  // namespace ebprof::report
