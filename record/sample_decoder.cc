#include "record/sample_decoder.h"

#include <cstddef>
#include <cstring>
#include <iterator>

#include "bpf/profile.h"
#include "format/contents.h"

namespace ebprof::record {

static_assert(offsetof(ebprof_sample, ips) == EBPROF_SAMPLE_HEADER_SIZE);
static_assert(std::size(kUserRegisterNumbers) == EBPROF_USER_REGS);
static_assert(sizeof(ebprof_sample::comm) == EBPROF_COMM_LEN);
// The BPF side's states are the file's, number for number.
static_assert(EBPROF_BLOCK_RUNNABLE == static_cast<int>(format::BlockState::kRunnable));
static_assert(EBPROF_BLOCK_SLEEP == static_cast<int>(format::BlockState::kSleeping));
static_assert(EBPROF_BLOCK_UNINTERRUPTIBLE ==
              static_cast<int>(format::BlockState::kUninterruptible));
static_assert(EBPROF_BLOCK_IDLE == static_cast<int>(format::BlockState::kIdle));
static_assert(EBPROF_BLOCK_OTHER == static_cast<int>(format::BlockState::kOther));
static_assert(EBPROF_BLOCK_STATES == format::kBlockStates);
static_assert(EBPROF_PY_ENDS == format::kPythonEnds);
static_assert(EBPROF_PY_TOO_DEEP == static_cast<int>(format::PythonEnd::kTooDeep));
static_assert(EBPROF_MAX_PY_FRAMES == format::kMaxPythonFrames);
static_assert(EBPROF_PY_ENTRY == format::kPythonEntryBit);

namespace {

// PERF_CONTEXT_MAX: callchain entries at or above it are context markers
// (PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER, ...), never addresses.
constexpr uint64_t kPerfContextMax = static_cast<uint64_t>(-4095);

// When the perf event computes the callchain (PERF_SAMPLE_CALLCHAIN),
// bpf_get_stack() hands out its kernel and user slices with the context
// marker that opens each.
std::span<const uint64_t> without_marker(std::span<const uint64_t> frames) {
  return !frames.empty() && frames.front() >= kPerfContextMax ? frames.subspan(1) : frames;
}

}  // namespace

std::optional<RawSample> decode_sample(std::span<const std::byte> bytes) {
  if (bytes.size() < EBPROF_SAMPLE_HEADER_SIZE)
    return std::nullopt;
  ebprof_sample header;
  std::memcpy(&header, bytes.data(), EBPROF_SAMPLE_HEADER_SIZE);
  const size_t nk = header.kernel_frames, nu = header.user_frames;
  const size_t np = header.python_frames;
  const size_t stack_bytes = header.user_stack_bytes;
  const size_t words = nk + nu + 2 * np;
  if (nk > EBPROF_MAX_FRAMES || nu > EBPROF_MAX_FRAMES || np > EBPROF_MAX_PY_FRAMES ||
      header.python_end >= EBPROF_PY_ENDS || stack_bytes > EBPROF_MAX_USER_STACK ||
      bytes.size() < EBPROF_SAMPLE_HEADER_SIZE + words * sizeof(uint64_t) + stack_bytes ||
      header.user_abi > EBPROF_ABI_32 || header.kind > EBPROF_KIND_SWITCH_WINDOW ||
      (header.kind == EBPROF_KIND_OFF_CPU &&
       (header.blocked_ns == 0 || header.state >= EBPROF_BLOCK_STATES)) ||
      (header.kind == EBPROF_KIND_WAKER && header.peer == 0))
    return std::nullopt;

  RawSample s;
  s.time_ns = header.time_ns;
  s.tgid = header.tgid;
  s.tid = header.tid;
  s.cpu = header.cpu;
  s.off_cpu = header.kind == EBPROF_KIND_OFF_CPU;
  s.waker_follows = s.off_cpu && (header.flags & EBPROF_WAKER_FOLLOWS);
  s.waker = header.kind == EBPROF_KIND_WAKER;
  s.switch_window = header.kind == EBPROF_KIND_SWITCH_WINDOW;
  s.peer = s.waker ? header.peer : 0;
  s.blocked_ns = s.off_cpu ? header.blocked_ns : 0;
  s.period = header.kind == EBPROF_KIND_SAMPLE ? header.period : 0;
  s.state = s.off_cpu ? static_cast<uint8_t>(header.state) : 0;
  s.cgroup_id = header.cgroup_id;
  const char* comm = reinterpret_cast<const char*>(bytes.data()) + offsetof(ebprof_sample, comm);
  s.comm = std::string_view(comm, strnlen(comm, EBPROF_COMM_LEN));
  const auto* ips = reinterpret_cast<const uint64_t*>(bytes.data() + EBPROF_SAMPLE_HEADER_SIZE);
  s.kernel = without_marker({ips, nk});
  s.user = without_marker({ips + nk, nu});
  s.python = {ips + nk + nu, 2 * np};
  s.python_end = static_cast<format::PythonEnd>(header.python_end);
  s.holds_gil = header.flags & EBPROF_HOLDS_GIL;
  s.code_unknown = header.flags & EBPROF_CODE_UNKNOWN;
  s.image = header.image;
  if (header.user_abi != EBPROF_ABI_NONE) {
    s.user_abi = header.user_abi == EBPROF_ABI_64 ? format::UserAbi::k64 : format::UserAbi::k32;
    s.user_regs = std::span<const uint64_t>(
        reinterpret_cast<const uint64_t*>(bytes.data() + offsetof(ebprof_sample, user_regs)),
        EBPROF_USER_REGS);
    s.user_stack = bytes.subspan(EBPROF_SAMPLE_HEADER_SIZE + words * sizeof(uint64_t), stack_bytes);
  }
  return s;
}

}  // namespace ebprof::record
