#include "report/symbolize/symbolizer.h"

#include "report/symbolize/kernel_names.h"
#include "report/symbolize/python_lines.h"

namespace ebprof::report {
namespace {

ProcessSymbols process_symbols(const Recording& recording, const StackRef& ref) {
  auto jit = recording.jit_symbols.find(ref.pid);
  return {captures_from(recording, ref),
          jit == recording.jit_symbols.end() ? nullptr : &jit->second,
          recording.embedded_symbols.get(), &recording.info};
}

}  // namespace

Symbolizer::Symbolizer(SymbolizeOptions options, FileFinder& files,
                       std::shared_ptr<FrameTable> table)
    : options_(std::move(options)), user_(options_, files), table_(std::move(table)) {}

void Symbolizer::prefetch(const Recording& recording, const StackRef& ref, uint64_t lookup) {
  if (prefetch_budget_ == 0)
    return;
  --prefetch_budget_;
  user_.prefetch(process_symbols(recording, ref), lookup);
}

const std::vector<uint32_t>& Symbolizer::frames_at(const Recording& recording, const StackRef& ref,
                                                   FrameKind kind, uint64_t address,
                                                   uint64_t lookup) {
  // Kernel addresses name alike in every process of a recording.
  const bool kernel = kind == FrameKind::kKernel;
  const AddressKey key{recording.index, kernel ? UINT32_MAX : ref.pid,
                       kernel ? UINT32_MAX : ref.capture, address, lookup};
  auto [it, inserted] = frames_at_.try_emplace(key);
  if (!inserted)
    return it->second;
  std::vector<Frame> frames;
  if (kernel)
    frames.push_back(name_kernel_address(recording.kernel_symbols,
                                         recording.info.kernel_addresses_hidden, address, lookup));
  else
    user_.name(process_symbols(recording, ref), address, lookup, frames);
  for (Frame& f : frames)
    it->second.push_back(table_->intern(std::move(f)));
  return it->second;
}

uint32_t Symbolizer::python_frame(const Recording& recording, const StackRef& ref,
                                  const format::PythonFrame& frame) {
  const PythonKey key{recording.index, ref.pid, frame.code, frame.checksum, frame.lasti};
  auto [it, inserted] = python_frames_.try_emplace(key);
  if (!inserted)
    return it->second;
  Frame f{.kind = FrameKind::kPython, .address = frame.code, .file_offset = frame.code};
  const format::CodeObject* code = nullptr;
  if (auto pid = recording.python_code.find(ref.pid); pid != recording.python_code.end())
    if (auto at = pid->second.find(frame.code); at != pid->second.end())
      for (const format::CodeObject& c : at->second)
        if (c.checksum == frame.checksum)
          code = &c;
  if (!code) {
    f.reason = UnnamedReason::kCodeObjectNotRead;
    f.module = "[python]";
  } else {
    f.name = f.system_name = code->qualname;
    f.path = f.file = code->filename;
    const size_t slash = code->filename.rfind('/');
    f.module = slash == std::string::npos ? code->filename : code->filename.substr(slash + 1);
    f.line = python_line(code->line_table, code->first_line, frame.lasti);
    // Where in its bytecode, as a native frame's offset is in its function.
    f.offset = frame.lasti > 0 ? 2 * static_cast<uint64_t>(frame.lasti) : 0;
    if (options_.lines && f.line > 0)
      f.name += ' ' + f.module + ':' + std::to_string(f.line);
  }
  return it->second = table_->intern(std::move(f));
}

}  // namespace ebprof::report
