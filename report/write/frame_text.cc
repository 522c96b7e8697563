#include "report/write/frame_text.h"

#include <algorithm>
#include <cstring>

#include "common/text.h"
#include "format/losses.h"

namespace ebprof::report {
namespace {

// Where an unnamed frame is, as far as anything is known.
std::string where(const Frame& f) {
  switch (f.reason) {
    case UnnamedReason::kMapsNotRecorded:
    case UnnamedReason::kExitedBeforeMapsRead:
    case UnnamedReason::kForkedFromUnreadProcess:
    case UnnamedReason::kMapsUnreadable:
    case UnnamedReason::kNoMapping:
      return hex(f.address);
    case UnnamedReason::kJitMapMissing:
      return "[anon]+" + hex(f.offset);
    default:
      return f.kernel() ? hex(f.address) : f.module + "+" + hex(f.file_offset);
  }
}

std::string unnamed_name(const Frame& f) {
  if (f.reason == UnnamedReason::kStackLost)
    return std::string("[unknown] (") + reason_text(f.reason) + ")";
  std::string why = reason_text(f.reason);
  if (f.reason == UnnamedReason::kNoKernelSymbol)
    why = f.name.empty() ? "below every kernel symbol" : "past " + f.name;
  if (f.reason == UnnamedReason::kNoSymbol)
    why.clear();  // the module and offset say it all
  return "[unknown] (" + where(f) + (why.empty() ? "" : ", " + why) + ")";
}

}  // namespace

std::string frame_name(const Frame& f) {
  switch (f.kind) {
    case FrameKind::kOffCpuState:
      return std::string("[off-cpu: ") + state_name(f.state) + "]";
    case FrameKind::kWakerSeparator:
      return "--";
    case FrameKind::kStackEnd:
      // What to change when the window is too small: perf's own syntax.
      if (f.reason == UnnamedReason::kWindowTooSmall)
        return "[truncated: stack window too small (--call-graph dwarf," +
               std::to_string(f.offset) + ")]";
      return std::string("[truncated: ") + reason_text(f.reason) + "]";
    default:
      return f.named() ? f.name : unnamed_name(f);
  }
}

const char* reason_text(UnnamedReason reason) {
  switch (reason) {
    case UnnamedReason::kNone:
      return "";
    case UnnamedReason::kStackLost:
      return "stack lost in a damaged frame";
    case UnnamedReason::kMapsNotRecorded:
      return "process maps not recorded";
    case UnnamedReason::kExitedBeforeMapsRead:
      return "process exited before its maps were read";
    case UnnamedReason::kForkedFromUnreadProcess:
      return "forked from a process whose maps were never read";
    case UnnamedReason::kMapsUnreadable:
      return "process maps unreadable when recording";
    case UnnamedReason::kNoMapping:
      return "no mapping";
    case UnnamedReason::kJitMapMissing:
      return "JIT map missing";
    case UnnamedReason::kBinaryNotFound:
      return "binary not found";
    case UnnamedReason::kBuildIdMismatch:
      return "build-id mismatch";
    case UnnamedReason::kStripped:
      return "stripped without debuginfo";
    case UnnamedReason::kNotInEmbeddedTable:
      return "no symbol in the embedded table";
    case UnnamedReason::kNoSymbol:
      return "no symbol";
    case UnnamedReason::kKernelAddressesHidden:
      return "kernel addresses hidden";
    case UnnamedReason::kNoKallsyms:
      return "no kallsyms recorded";
    case UnnamedReason::kNoKernelSymbol:
      return "no kernel symbol";
    case UnnamedReason::kCodeObjectNotRead:
      return "Python code object not read";
    case UnnamedReason::kWindowTooSmall:
      return "stack window too small";
    case UnnamedReason::kNoCfi:
      return "no CFI for an address";
    case UnnamedReason::kUnreadableStack:
      return "stack unreadable";
    case UnnamedReason::kUnwindLoop:
      return "unwinding loop";
    case UnnamedReason::kCfiTooCostly:
      return "CFI too costly to evaluate";
    case UnnamedReason::kStackTooDeep:
      return "stack too deep to follow";
    case UnnamedReason::k32BitTask:
      return "32-bit task not unwound";
    case UnnamedReason::kStackTruncated:
      return "deeper than 127 frames";
    case UnnamedReason::kPythonWalkCut:
      return "Python frames cut short";
  }
  return "unknown reason";
}

const char* state_name(ThreadState state) {
  switch (state) {
    case ThreadState::kRunnable:
      return "R preempted";
    case ThreadState::kSleeping:
      return "S sleeping";
    case ThreadState::kUninterruptible:
      return "D uninterruptible";
    case ThreadState::kIdle:
      return "I idle";
    case ThreadState::kOther:
      return "other";
    case ThreadState::kOnCpu:
      return "on CPU";
    case ThreadState::kUnknown:
      break;
  }
  return "unknown state";
}

const char* unit_name(Unit unit) {
  switch (unit) {
    case Unit::kMicroseconds:
      return "us";
    case Unit::kEvents:
      return "events";
    case Unit::kSamples:
      break;
  }
  return "samples";
}

std::string describe_rate(uint64_t frequency, uint64_t period) {
  if (period == 1)
    return "on every event";
  return period ? "every " + std::to_string(period) + " events"
                : "at " + std::to_string(frequency) + " Hz";
}

std::string describe_losses(std::span<const format::LossCount> totals, bool sample_kept) {
  uint64_t lost = 0;
  std::string causes;
  for (const auto& l : totals) {
    if (l.count == 0 || l.sample_kept != sample_kept)
      continue;
    lost += l.count;
    causes += (causes.empty() ? "" : ", ") + std::string(format::loss_cause_name(l.cause)) + ": " +
              std::to_string(l.count);
  }
  return lost ? std::to_string(lost) + " (" + causes + ")" : "0";
}

std::string describe_unnamed(std::vector<std::pair<UnnamedReason, uint64_t>> unnamed,
                             uint64_t total, const char* unit) {
  // Most first; equal counts in the order of their text.
  std::sort(unnamed.begin(), unnamed.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second
                                : std::strcmp(reason_text(a.first), reason_text(b.first)) < 0;
  });
  std::string out;
  bool jit = false;
  for (const auto& [reason, samples] : unnamed) {
    out += (out.empty() ? "" : ", ") + std::string(reason_text(reason)) + " in " +
           std::to_string(samples) + " " + unit + " (" +
           string_printf("%.1f%%", total ? 100.0 * samples / total : 0) + ")";
    jit |= reason == UnnamedReason::kJitMapMissing;
  }
  // Runtimes write a perf map only when asked.
  if (jit)
    out +=
        "; a JIT's perf map is written by node --perf-basic-prof, java "
        "-XX:+DumpPerfMapAtExit (or jcmd PID Compiler.perfmap), python3.12 -X perf";
  return out.empty() ? "none" : out;
}

}  // namespace ebprof::report
