#include "report/merge.h"

#include <unistd.h>

#include <set>
#include <unordered_map>

#include "common/error.h"
#include "format/reader.h"
#include "format/writer.h"

namespace ebprof::report {
namespace {

// Copies one input's frames to the merged file. A plain recording's first
// frame is its header: its Source frame goes just before it.
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

  void on_source(format::Source&& source) override {
    start(source.path.empty() ? input_ : input_ + " > " + source.path, source.version_major,
          source.version_minor);
  }
  void on_info(format::RecordingInfo&& info) override {
    if (!started_)
      start(input_, version_.first, version_.second);
    out_.write(info);
  }
  void on_kernel_symbols(std::vector<format::KernelSymbol>&& symbols) override {
    out_.write(symbols);
  }
  void on_process(format::ProcessInfo&& process) override { out_.write(process); }
  void on_samples(format::SampleBatch&& batch) override {
    samples_ += batch.samples.size();
    out_.write(batch);
  }
  void on_end(format::RecordingEnd&& end) override {
    out_.write(end);
    // A merged input's next source, if any, starts with its own Source.
    started_ = false;
  }
  void on_losses(format::Losses&& losses) override { out_.write(losses); }
  void on_jit_symbols(format::JitSymbols&& symbols) override { out_.write(symbols); }

  // Hourly recordings of one host embed the same binaries over and over:
  // only symbols not yet written for a build-id go out.
  void on_elf_symbols(format::EmbeddedSymbols&& e) override {
    auto [written, first] = written_.try_emplace(e.build_id);
    std::erase_if(e.symbols,
                  [&](const ElfSymbol& s) { return !written->second.insert(s.address).second; });
    if (!first && e.symbols.empty())
      return;
    if (!first)
      e.segments.clear();  // the reader keeps the first frame's layout
    out_.write(e);
  }

 private:
  void start(const std::string& path, uint16_t major, uint16_t minor) {
    out_.write(format::Source{static_cast<uint32_t>(next_index_++), path, major, minor});
    started_ = true;
  }

  format::RecordingWriter& out_;
  std::string input_;
  std::pair<uint16_t, uint16_t> version_;
  bool started_ = false;
  uint64_t next_index_ = 0;
  uint64_t samples_ = 0;
  std::unordered_map<std::string, std::set<uint64_t>> written_;
};

}  // namespace

MergeResult merge_recordings(const std::string& output, const std::vector<std::string>& inputs) {
  MergeResult result;
  format::RecordingWriter writer = format::RecordingWriter::create(output, {.merged = true});
  try {
    Merger merger(writer);
    for (const std::string& input : inputs) {
      merger.begin(input);
      format::ReadResult r = format::read_recording(input, merger);
      if (!r.warning.empty())
        result.warnings.push_back(r.warning);
    }
    writer.close();
    result.sources = merger.sources();
    result.samples = merger.samples();
  } catch (...) {
    ::unlink(output.c_str());
    throw;
  }
  return result;
}

}  // namespace ebprof::report
