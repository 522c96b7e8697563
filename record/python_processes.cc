#include "record/python_processes.h"

#include <sys/uio.h>

#include <array>
#include <cstring>
#include <string_view>

#include "common/error.h"

namespace ebprof::record {

namespace {

// CPython 3.11 on x86-64, checked against Debian 12's python3.11 (3.11.2)
// and a shared-library build of 3.11.7: the structures' offsets, the same
// in every 3.11 release (its ABI is fixed within a minor version), and
// glibc's place for a thread's first pthread keys (pthread_getspecific:
// fsbase + 0x310 + 16 * key, then the value 8 bytes in).
constexpr PythonLayout kLayouts[] = {{
    .minor = 11,
    .walk = {.tsd_offset = 0x318,
             .tstate_current = 576,
             .tss_key = 596,
             .thread_id = 160,
             .thread_cframe = 56,
             .cframe_frame = 8,
             .frame_code = 32,
             .frame_previous = 48,
             .frame_instr = 56,
             .frame_entry = 68,
             .frame_owner = 69,
             .code_flags = 48,
             .code_argcount = 56,
             .code_kwonly = 64,
             .code_firstline = 72,
             .code_name = 120,
             .code_bytecode = 184,
             .max_owner = 2},
    .code_filename = 112,
    .code_qualname = 128,
    .code_linetable = 136,
    .runtime_interpreters = 40,
    .interp_threads = 16,
    .thread_interp = 16,
}};

constexpr std::string_view kExports[] = {"Py_Version", "_PyRuntime", "PyCode_Type",
                                         "_PyEval_EvalFrameDefault"};

// The most a name or a line table is read: larger is not a real one.
constexpr size_t kMaxText = 4096;
constexpr size_t kMaxLineTable = 64 * 1024;

template <typename T>
bool read_value(uint32_t pid, uint64_t address, T& out) {
  return read_memory(pid, address, &out, sizeof(out));
}

uint32_t checksum_of(const uint8_t* code, const ebprof_python_proc& w) {
  auto field = [&](uint16_t at) {
    int32_t v;
    std::memcpy(&v, code + at, sizeof(v));
    return static_cast<uint32_t>(v);
  };
  uint64_t name;
  std::memcpy(&name, code + w.code_name, sizeof(name));
  // bpf/python.bpf.h's, to the bit: the fixed fields, and the name's
  // address (another function made where a freed one was has its own).
  return ((field(w.code_argcount) << 25) + (field(w.code_kwonly) << 18) +
          (field(w.code_flags) << 10) + field(w.code_firstline)) ^
         static_cast<uint32_t>(name >> 4);
}

void append_utf8(std::string& out, uint32_t c) {
  // A lone surrogate (a file name decoded with surrogateescape) or a value
  // past Unicode is no character: U+FFFD, never invalid UTF-8.
  if ((c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
    c = 0xfffd;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

// A str object's text as UTF-8: compact ASCII strings hold their bytes
// after a 48-byte header, other compact ones their 1, 2 or 4-byte code
// points after 72 bytes (3.11's PyASCIIObject, PyCompactUnicodeObject).
std::optional<std::string> read_str(uint32_t pid, uint64_t address) {
  std::array<uint8_t, 72> head;
  if (!address || !read_memory(pid, address, head.data(), head.size()))
    return std::nullopt;
  int64_t length;
  uint32_t state;
  std::memcpy(&length, head.data() + 16, sizeof(length));
  std::memcpy(&state, head.data() + 32, sizeof(state));
  const uint32_t kind = (state >> 2) & 7;
  const bool compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
  if (length < 0 || static_cast<size_t>(length) > kMaxText || !compact ||
      (kind != 1 && kind != 2 && kind != 4))
    return std::nullopt;
  std::string raw(static_cast<size_t>(length) * kind, '\0');
  if (!read_memory(pid, address + (ascii ? 48 : 72), raw.data(), raw.size()))
    return std::nullopt;
  if (ascii)
    return raw;
  std::string out;
  for (size_t i = 0; i < static_cast<size_t>(length); ++i) {
    uint32_t c = 0;
    std::memcpy(&c, raw.data() + i * kind, kind);
    append_utf8(out, c);
  }
  return out;
}

// A bytes object's contents (ob_size at 16, the bytes at 32).
std::optional<std::string> read_bytes(uint32_t pid, uint64_t address) {
  int64_t size;
  if (!address || !read_value(pid, address + 16, size) || size < 0 ||
      static_cast<size_t>(size) > kMaxLineTable)
    return std::nullopt;
  std::string out(static_cast<size_t>(size), '\0');
  if (!read_memory(pid, address + 32, out.data(), out.size()))
    return std::nullopt;
  return out;
}

std::string version_text(uint32_t v) {
  return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 0xff) + "." +
         std::to_string((v >> 8) & 0xff);
}

}  // namespace

std::span<const PythonLayout> python_layouts() {
  return kLayouts;
}

bool read_memory(uint32_t pid, uint64_t address, void* out, size_t size) {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  return process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0) ==
         static_cast<ssize_t>(size);
}

const PythonProcesses::Build* PythonProcesses::build_of(uint32_t pid, const format::Mapping& m) {
  if (m.build_id.empty() || m.path.empty() || m.path[0] != '/')
    return nullptr;
  auto [it, inserted] = builds_.try_emplace(m.build_id);
  Build& b = it->second;
  if (inserted) {
    b.error = "not CPython";
    try {
      // Through the process's own view of the file: its root may not be ours.
      char name[64];
      std::snprintf(name, sizeof(name), "/proc/%u/map_files/%lx-%lx", pid,
                    static_cast<unsigned long>(m.start), static_cast<unsigned long>(m.end));
      const ElfExports e = read_exports(name, kExports);
      for (const ElfSymbol& s : e.symbols) {
        if (s.name == "Py_Version")
          b.version_vaddr = s.address;
        else if (s.name == "_PyRuntime")
          b.runtime_vaddr = s.address;
        else if (s.name == "PyCode_Type")
          b.code_type_vaddr = s.address;
        else {
          b.eval_vaddr = s.address;
          b.eval_size = s.size;
        }
      }
      b.segments = e.segments;
      if (b.version_vaddr && b.runtime_vaddr && b.code_type_vaddr && b.eval_vaddr)
        b.error.clear();
    } catch (const Error&) {
      // Gone before it was read, or not an ELF file: not one to read now,
      // and not worth a word; the next process that maps it tries again.
      builds_.erase(it);
      return nullptr;
    }
  }
  return b.error.empty() ? &b : nullptr;
}

std::string PythonProcesses::check(uint32_t pid, const Build& build, uint64_t bias,
                                   uint32_t version, Process& p) {
  if (version == 0)
    return "its memory could not be read";
  const PythonLayout* layout = nullptr;
  for (const PythonLayout& l : layouts_)
    if ((version >> 24) == 3 && ((version >> 16) & 0xff) == l.minor)
      layout = &l;
  if (!layout)
    return "CPython " + version_text(version) + ": ebprof reads 3.11 only";
  const uint64_t runtime = build.runtime_vaddr + bias, code_type = build.code_type_vaddr + bias;
  // The code type's instance size is where a code object's instructions
  // start: the one field every frame's line depends on.
  int64_t basicsize = 0;
  if (!read_value(pid, code_type + 32, basicsize) || basicsize != layout->walk.code_bytecode)
    return "CPython " + version_text(version) + ": its code objects are not 3.11's (a build " +
           "ebprof does not know)";
  // Once the interpreter runs, its first thread must point back at it.
  uint64_t interp = 0, thread = 0, back = 0;
  if (!read_value(pid, runtime + layout->runtime_interpreters, interp))
    return "its memory could not be read";
  if (interp && read_value(pid, interp + layout->interp_threads, thread) && thread &&
      (!read_value(pid, thread + layout->thread_interp, back) || back != interp))
    return "CPython " + version_text(version) + ": its thread states are not 3.11's (a build " +
           "ebprof does not know)";
  p.layout = layout;
  p.entry = layout->walk;
  p.entry.runtime = runtime;
  p.entry.code_type = code_type;
  return "";
}

void PythonProcesses::inspect(format::ProcessInfo& info) {
  const Build* build = nullptr;
  const format::Mapping* at = nullptr;
  for (const format::Mapping& m : info.mappings)
    if ((build = build_of(info.pid, m))) {
      at = &m;
      break;
    }
  auto known = processes_.find(info.pid);
  if (!build) {
    if (known != processes_.end())
      forget(info.pid);  // it exec'd something else
    return;
  }
  // The load bias: where the mapping's file offset is, less where the
  // file places it.
  uint64_t bias = 0;
  for (const LoadSegment& s : build->segments)
    if (at->file_offset >= s.offset && at->file_offset < s.offset + s.file_size)
      bias = at->start - (s.vaddr + (at->file_offset - s.offset));
  info.python.build_id = at->build_id;
  info.python.eval_start = build->eval_vaddr + bias;
  info.python.eval_end = build->eval_vaddr + build->eval_size + bias;
  read_value(info.pid, build->version_vaddr + bias, info.python.version);
  Process fresh;
  info.python.error = check(info.pid, *build, bias, info.python.version, fresh);
  if (!info.python.error.empty()) {
    if (known != processes_.end())
      forget(info.pid);
    return;
  }
  if (known != processes_.end() && known->second.entry.runtime == fresh.entry.runtime)
    return;  // the same interpreter, already walked
  fresh.entry.wake_until_ns = info.captured_at_ns + kWakeForNs;
  Process& p = processes_[info.pid] = std::move(fresh);
  publish_(info.pid, &p.entry);
  ++found_;
}

std::optional<format::CodeObject> PythonProcesses::read_code(uint32_t pid, const Process& p,
                                                             uint64_t address,
                                                             uint32_t checksum) const {
  std::array<uint8_t, 144> code;
  uint64_t type = 0;
  if (!read_memory(pid, address, code.data(), code.size()))
    return std::nullopt;
  std::memcpy(&type, code.data() + 8, sizeof(type));
  // Freed, or another object since: never another function's name.
  if (type != p.entry.code_type || checksum_of(code.data(), p.entry) != checksum)
    return std::nullopt;
  auto pointer = [&](uint16_t at) {
    uint64_t v;
    std::memcpy(&v, code.data() + at, sizeof(v));
    return v;
  };
  format::CodeObject c;
  c.address = address;
  c.checksum = checksum;
  int32_t first_line;
  std::memcpy(&first_line, code.data() + p.entry.code_firstline, sizeof(first_line));
  c.first_line = static_cast<uint32_t>(first_line);
  std::optional<std::string> qualname = read_str(pid, pointer(p.layout->code_qualname));
  if (!qualname)
    qualname = read_str(pid, pointer(p.entry.code_name));
  std::optional<std::string> filename = read_str(pid, pointer(p.layout->code_filename));
  std::optional<std::string> table = read_bytes(pid, pointer(p.layout->code_linetable));
  if (!qualname || !filename)
    return std::nullopt;
  c.qualname = std::move(*qualname);
  c.filename = std::move(*filename);
  c.line_table = table.value_or("");
  return c;
}

void PythonProcesses::take_new(uint32_t pid, uint32_t stack, std::span<const uint64_t> words) {
  if (words.empty())
    return;
  auto it = processes_.find(pid);
  if (it == processes_.end())
    return;
  Process& p = it->second;
  if (stack != kNotInterned) {
    if (p.stacks.size() >= kMaxNamedPerProcess)
      p.stacks.clear();
    if (!p.stacks.insert(stack).second)
      return;
  }
  for (size_t i = 0; i + 1 < words.size(); i += 2) {
    const format::PythonFrame f = format::python_frame(words[i], words[i + 1]);
    if (p.named.size() >= kMaxNamedPerProcess)
      p.named.clear();  // a process making code without end: name again
    auto [at, inserted] = p.named.try_emplace(f.code, f.checksum);
    if (!inserted && at->second == f.checksum)
      continue;
    at->second = f.checksum;
    if (std::optional<format::CodeObject> c = read_code(pid, p, f.code, f.checksum)) {
      format::PythonCode& out = pending_[pid];
      out.pid = pid;
      out.codes.push_back(std::move(*c));
    }
  }
}

std::vector<format::PythonCode> PythonProcesses::drain() {
  std::vector<format::PythonCode> out;
  out.reserve(pending_.size());
  for (auto& [pid, code] : pending_)
    out.push_back(std::move(code));
  pending_.clear();
  return out;
}

void PythonProcesses::forget(uint32_t pid) {
  if (processes_.erase(pid))
    publish_(pid, nullptr);
}

std::vector<uint32_t> PythonProcesses::pids() const {
  std::vector<uint32_t> out;
  out.reserve(processes_.size());
  for (const auto& [pid, p] : processes_)
    out.push_back(pid);
  return out;
}

}  // namespace ebprof::record
