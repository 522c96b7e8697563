#pragma once

// CPython processes: which sampled processes run an interpreter whose
// frames BPF can read, where it finds them (the python_procs map), and the
// code objects their frames ran, named from the live process off the
// sampling path. Frames are read in BPF at sample time because they live on
// the heap, where no copy of the stack finds them; names are read here,
// once per code object, because BPF reads no strings.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bpf/profile.h"
#include "common/elf_file.h"
#include "format/contents.h"

namespace ebprof::record {

// The offsets of one CPython minor version's structures, as BPF and the
// recorder read them: a version ebprof reads is a row of python_layouts().
struct PythonLayout {
  uint32_t minor = 0;         // of 3.x
  ebprof_python_proc walk{};  // the offsets BPF walks by (addresses left 0)
  // What the recorder reads of a code object, and of the runtime to check
  // the layout against the process.
  uint16_t code_filename = 0, code_qualname = 0, code_linetable = 0;
  uint16_t runtime_interpreters = 0;  // _PyRuntime.interpreters.head
  uint16_t interp_threads = 0;        // PyInterpreterState.threads.head
  uint16_t thread_interp = 0;         // PyThreadState.interp
};
std::span<const PythonLayout> python_layouts();

// Reads another process's memory (process_vm_readv): false where any of
// it cannot be read.
bool read_memory(uint32_t pid, uint64_t address, void* out, size_t size);

class PythonProcesses {
 public:
  // Puts a process's entry into the BPF map, or takes it out (null).
  using Publish = std::function<void(uint32_t pid, const ebprof_python_proc* entry)>;

  explicit PythonProcesses(Publish publish,
                           std::span<const PythonLayout> layouts = python_layouts())
      : publish_(std::move(publish)), layouts_(layouts) {}

  // A process's maps were captured (`info`, about to be written): finds
  // the interpreter it runs, checks its layout against the live process,
  // and has BPF walk its frames from now on; says in info.python what it
  // found, with the reason when its frames cannot be read.
  void inspect(format::ProcessInfo& info);

  // The code objects of Python frames `words` (format::Stack::python's
  // pairs) that `pid` ran and that were not yet read, read now while the
  // process lives. `stack`: the file's id of the stack they are in, looked
  // at once per process (a forked child runs its parent's stacks, whose
  // code objects it holds at the same addresses: it needs them read from
  // it too); kNotInterned for frames not interned yet, looked at every time.
  static constexpr uint32_t kNotInterned = UINT32_MAX;
  void take_new(uint32_t pid, uint32_t stack, std::span<const uint64_t> words);

  // The code objects read since the last drain, a frame per process.
  std::vector<format::PythonCode> drain();

  // Processes that are gone: their entries and tables let go.
  void forget(uint32_t pid);
  // A new file (--switch-output): its code objects are written again.
  void forget_taken() {
    for (auto& [pid, p] : processes_) {
      p.named.clear();
      p.stacks.clear();
    }
  }
  // Processes whose frames BPF was given to walk, over the recording.
  size_t found() const { return found_; }
  std::vector<uint32_t> pids() const;

  // How long after a process is found its samples wake the recorder at
  // once: a short-lived process's code objects are read before it exits.
  static constexpr uint64_t kWakeForNs = 2'000'000'000;
  // Code objects remembered per process, past which it starts afresh.
  static constexpr size_t kMaxNamedPerProcess = 1 << 16;

 private:
  // What an ELF file holds of CPython, by build-id.
  struct Build {
    std::string error;  // why it cannot be read ("" when it can)
    uint64_t version_vaddr = 0, runtime_vaddr = 0, code_type_vaddr = 0;
    uint64_t eval_vaddr = 0, eval_size = 0;
    std::vector<LoadSegment> segments;
  };
  struct Process {
    ebprof_python_proc entry{};
    const PythonLayout* layout = nullptr;
    // The code objects read, by address, with their checksum: another
    // checksum at an address is another code object.
    std::unordered_map<uint64_t, uint32_t> named;
    std::unordered_set<uint32_t> stacks;  // whose frames were looked at
  };
  const Build* build_of(uint32_t pid, const format::Mapping& m);
  // The layout of the interpreter at `runtime` in `pid`, or why none fits.
  // `version`: its Py_Version, 0 when it could not be read.
  std::string check(uint32_t pid, const Build& build, uint64_t bias, uint32_t version, Process& p);
  std::optional<format::CodeObject> read_code(uint32_t pid, const Process& p, uint64_t address,
                                              uint32_t checksum) const;

  Publish publish_;
  std::span<const PythonLayout> layouts_;
  std::unordered_map<std::string, Build> builds_;  // by build-id; "" error: CPython
  std::unordered_map<uint32_t, Process> processes_;
  std::unordered_map<uint32_t, format::PythonCode> pending_;
  size_t found_ = 0;
};

}  // namespace ebprof::record
