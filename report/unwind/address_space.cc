#include "report/unwind/address_space.h"

#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "common/dwarf_cfi.h"
#include "report/unwind/cfi_elf.h"

namespace ebprof::report {
namespace {

pid_t next_thread(Dwfl*, void* arg, void** thread) {
  if (*thread)
    return 0;
  *thread = arg;
  return 1;
}

bool get_thread(Dwfl*, pid_t, void* arg, void** thread) {
  *thread = arg;
  return true;
}

// Where the ELF file's loadable segments put the mapping: runtime address
// = bias + virtual address. The segment mapped is the one whose page range
// holds the mapping's file offset; of several (a linker that packs a
// read-only and an executable segment into one page), the last.
std::optional<uint64_t> load_bias(const format::Mapping& m, std::span<const LoadSegment> segments) {
  const LoadSegment* mapped = nullptr;
  for (const LoadSegment& s : segments) {
    const uint64_t page = s.offset & ~uint64_t{0xfff};
    if (page <= m.file_offset && m.file_offset < s.offset + s.file_size &&
        (!mapped || s.offset > mapped->offset))
      mapped = &s;
  }
  if (!mapped)
    return std::nullopt;
  return m.start - m.file_offset - (mapped->vaddr - mapped->offset);
}

}  // namespace

const char* window_block(const Recording& r, const format::UserWindow& w, uint64_t index) {
  return index < w.blocks.size() ? r.blocks.find(w.blocks[index]) : nullptr;
}

bool read_window(const Recording& r, const format::UserWindow& w, uint64_t address, void* out,
                 size_t size) {
  const uint32_t block_bytes = r.blocks.block_bytes();  // what they were stored in
  if (!block_bytes || address < w.base || address + size > w.base + w.size ||
      address + size < address)
    return false;
  auto* to = static_cast<char*>(out);
  const uint64_t first = w.base / block_bytes;
  while (size > 0) {
    const size_t at = address % block_bytes, n = std::min<size_t>(size, block_bytes - at);
    const char* block = window_block(r, w, address / block_bytes - first);
    if (!block)
      return false;  // lost with a damaged frame
    std::memcpy(to, block + at, n);
    to += n;
    address += n;
    size -= n;
  }
  return true;
}

void AddressSpace::DwflEnd::operator()(Dwfl* dwfl) const {
  dwfl_end(dwfl);
}

AddressSpace::AddressSpace(const Recording& r, std::span<const format::ProcessInfo> captures,
                           FileFinder& files, CfiFiles& cfi_files)
    : dwfl_(dwfl_begin(&offline_callbacks())) {
  if (!dwfl_)
    return;
  dwfl_report_begin(dwfl_.get());
  // Each file once: the capture in effect first, then files only later
  // captures map (loaded after it was taken).
  std::set<std::pair<std::string, std::string>> reported;
  for (const format::ProcessInfo& capture : captures)
    for (const format::Mapping& m : capture.mappings)
      if (!m.path.empty() && m.path[0] == '/' && reported.insert({m.path, m.build_id}).second)
        report(m, r, files, cfi_files);
  dwfl_report_end(dwfl_.get(), nullptr, nullptr);
  static const Dwfl_Thread_Callbacks kThread = {
      .next_thread = next_thread,
      .get_thread = get_thread,
      .memory_read = memory_read,
      .set_initial_registers = set_initial_registers,
      .detach = nullptr,
      .thread_detach = nullptr,
  };
  // Needs a module: it takes the architecture from one.
  attached_ = dwfl_attach_state(dwfl_.get(), nullptr, 1, &kThread, this);
  rules_.emplace(dwfl_.get());
}

AddressSpace::~AddressSpace() = default;

void AddressSpace::report(const format::Mapping& m, const Recording& r, FileFinder& files,
                          CfiFiles& cfi_files) {
  std::string path;
  const ElfSymbolTable* binary = files.binary_of(m, path);
  std::optional<uint64_t> bias;
  int fd = -1;
  if (binary) {
    bias = load_bias(m, binary->segments());
  } else if (auto cfi = r.embedded_cfi->find(m.build_id);
             !m.build_id.empty() && cfi != r.embedded_cfi->end()) {
    bias = load_bias(m, cfi->second.segments);
    CfiFile& file = cfi_files[m.build_id];
    if (!file.fd || file.pieces != cfi->second.pieces.size()) {
      file.fd = write_cfi_elf(cfi->second);
      file.pieces = cfi->second.pieces.size();
    }
    fd = dup(file.fd.get());
    path = m.path;
  }
  if (!bias || path.empty())
    return;  // no CFI for it: libdwfl tries frame pointers there
  // Owns the descriptor when it succeeds.
  if (!dwfl_report_elf(dwfl_.get(), m.path.c_str(), path.c_str(), fd, *bias, true) && fd >= 0)
    close(fd);
}

bool AddressSpace::read_word(uint64_t address, uint64_t& value) {
  // Walks read a few words of each block, going up: the block last read
  // is kept at hand. A word across two blocks goes the long way.
  const uint64_t block_bytes = recording_->blocks.block_bytes();
  if (block_bytes && address >= window_->base &&
      address - window_->base + sizeof value <= window_->size &&
      address % block_bytes + sizeof value <= block_bytes) {
    const uint64_t index = address / block_bytes - window_->base / block_bytes;
    if (index != block_index_) {
      block_index_ = index;
      block_ = window_block(*recording_, *window_, index);
    }
    if (block_) {
      std::memcpy(&value, block_ + address % block_bytes, sizeof value);
      return true;
    }
  } else if (read_window(*recording_, *window_, address, &value, sizeof value)) {
    return true;
  }
  (address >= window_->base + window_->size ? read_past_end_ : read_outside_) = true;
  return false;
}

bool AddressSpace::memory_read(Dwfl*, uint64_t address, uint64_t* result, void* arg) {
  return static_cast<AddressSpace*>(arg)->read_word(address, *result);
}

bool AddressSpace::set_initial_registers(Dwfl_Thread* thread, void* arg) {
  auto* self = static_cast<AddressSpace*>(arg);
  const std::vector<uint16_t>& numbers = self->recording_->info.user_registers;
  for (size_t i = 0; i < numbers.size() && i < self->window_->regs.size(); ++i) {
    Dwarf_Word value = self->window_->regs[i];
    if (!dwfl_thread_state_registers(thread, numbers[i], 1, &value))
      return false;
  }
  return true;
}

int AddressSpace::on_frame(Dwfl_Frame* frame, void* arg) {
  auto* self = static_cast<AddressSpace*>(arg);
  Dwarf_Addr pc = 0;
  // Not asked of libdwfl: to tell, it unwinds the frame, evaluating the
  // very CFI costly() is to screen. The first frame is its own address.
  const bool activation = self->pcs_.empty();
  if (!dwfl_frame_pc(frame, &pc, nullptr))
    return DWARF_CB_ABORT;
  // Each frame must be higher up the stack than the last (libdwfl 0.188
  // has no loop check of its own).
  Dwarf_Word sp = 0;
  if (dwfl_frame_reg(frame, format::kDwarfRsp, &sp) == 0) {
    if (!self->pcs_.empty() && sp <= self->last_sp_) {
      self->stop_ = UnnamedReason::kUnwindLoop;
      return DWARF_CB_ABORT;
    }
    self->last_sp_ = sp;
  }
  self->pcs_.push_back(pc);
  // Reads that failed on the way here did not stop the walk (a leaf's
  // registers saved in the red zone, below the window): only those of the
  // step that ends it say why it ended.
  self->read_past_end_ = self->read_outside_ = false;
  if (self->pcs_.size() >= kMaxFrames) {
    self->stop_ = UnnamedReason::kStackTooDeep;
    return DWARF_CB_ABORT;
  }
  // libdwfl steps from this frame next, by the CFI at it: not where that
  // would evaluate an expression without bound.
  if (self->rules_->costly(activation ? pc : pc - 1)) {
    self->stop_ = UnnamedReason::kCfiTooCostly;
    return DWARF_CB_ABORT;
  }
  return DWARF_CB_OK;
}

Walk AddressSpace::unwind(const Recording& r, const format::UserWindow& w, Walker walker) {
  Walk out;
  if (w.abi == format::UserAbi::k32) {
    out.end = UnnamedReason::k32BitTask;
    return out;
  }
  if (!attached_ || w.regs.empty()) {
    if (!w.regs.empty())
      out.pcs.push_back(w.regs[0]);  // the sampled instruction, at least
    out.end = UnnamedReason::kNoCfi;
    return out;
  }
  recording_ = &r;
  window_ = &w;
  block_index_ = UINT64_MAX;
  if (walker == Walker::kRules)
    if (std::optional<Walk> fast = walk_by_rules())
      return std::move(*fast);
  return walk_with_libdwfl();
}

std::optional<Walk> AddressSpace::walk_by_rules() {
  uint64_t pc = 0, sp = 0, fp = 0;
  bool have_pc = false, have_sp = false, have_fp = false;
  const std::vector<uint16_t>& numbers = recording_->info.user_registers;
  for (size_t i = 0; i < numbers.size() && i < window_->regs.size(); ++i) {
    if (numbers[i] == format::kDwarfRip)
      pc = window_->regs[i], have_pc = true;
    else if (numbers[i] == format::kDwarfRsp)
      sp = window_->regs[i], have_sp = true;
    else if (numbers[i] == format::kDwarfRbp)
      fp = window_->regs[i], have_fp = true;
  }
  if (!have_pc || !have_sp)
    return std::nullopt;
  Walk out;
  read_past_end_ = read_outside_ = false;
  // As libdwfl: the first frame by its address, the others by the call
  // (return address - 1).
  for (bool first = true;; first = false) {
    out.pcs.push_back(pc);
    if (out.pcs.size() >= kMaxFrames) {
      out.end = UnnamedReason::kStackTooDeep;
      return out;
    }
    const std::optional<StepRule>& rule = rules_->at(first ? pc : pc - 1);
    if (!rule || (rule->cfa_base == StepRule::Base::kRbp && !have_fp))
      return std::nullopt;
    if (rule->outermost)
      return out;
    const uint64_t cfa = (rule->cfa_base == StepRule::Base::kRsp ? sp : fp) + rule->cfa_offset;
    read_past_end_ = read_outside_ = false;
    uint64_t ra = 0;
    if (!read_word(cfa + rule->ra_at, ra)) {
      out.end = end_of_walk();
      return out;
    }
    if (ra == 0)
      return out;  // what libdwfl also takes for the outermost frame
    if (rule->rbp == StepRule::Rbp::kLost)
      have_fp = false;
    else if (rule->rbp == StepRule::Rbp::kSaved)
      have_fp = read_word(cfa + rule->rbp_at, fp);
    // Each frame higher up the stack than the last.
    if (cfa <= sp) {
      out.end = UnnamedReason::kUnwindLoop;
      return out;
    }
    pc = ra;
    sp = cfa;
  }
}

Walk AddressSpace::walk_with_libdwfl() {
  ++libdwfl_walks_;
  Walk out;
  pcs_.clear();
  last_sp_ = 0;
  read_past_end_ = read_outside_ = false;
  stop_ = UnnamedReason::kNone;
  (void)dwfl_errno();
  const int rc = dwfl_getthread_frames(dwfl_.get(), 1, on_frame, this);
  out.pcs = std::move(pcs_);
  pcs_ = {};
  // A walk that ran out of stack returns 0, like a complete one: the
  // reads it tried say which it was.
  const UnnamedReason reads = end_of_walk();
  out.end = stop_ != UnnamedReason::kNone   ? stop_
            : reads != UnnamedReason::kNone ? reads
            : rc == 0                       ? UnnamedReason::kNone
                                            : UnnamedReason::kNoCfi;
  return out;
}

UnnamedReason AddressSpace::end_of_walk() const {
  return read_past_end_  ? UnnamedReason::kWindowTooSmall
         : read_outside_ ? UnnamedReason::kUnreadableStack
                         : UnnamedReason::kNone;
}

}  // namespace ebprof::report
