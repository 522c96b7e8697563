#include "record/session.h"

#include <malloc.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <iterator>
#include <optional>

#include "common/error.h"
#include "common/output_file.h"
#include "common/text.h"
#include "format/writer.h"
#include "record/bpf_sampler.h"
#include "record/child_process.h"
#include "record/config.h"
#include "record/flight_recorder.h"
#include "record/host_info.h"
#include "record/kallsyms.h"
#include "record/loss_ledger.h"
#include "record/process_tracker.h"
#include "record/recorder.h"
#include "record/sample_decoder.h"
#include "record/stack_windows.h"
#include "record/status_line.h"
#include "record/system_processes.h"
#include "record/targets.h"

namespace ebprof::record {
namespace {

volatile sig_atomic_t g_stop_signal = 0;
// SIGUSR2 came; taken with exchange(), so that one arriving as the last is
// taken is not lost (a lock-free atomic is safe in a handler).
std::atomic<int> g_switch_signal = 0;
static_assert(std::atomic<int>::is_always_lock_free);

void on_stop_signal(int sig) {
  g_stop_signal = sig;
}

void on_switch_signal(int) {
  g_switch_signal = 1;
}

// While recording, SIGINT/SIGTERM ask for a clean stop (no SA_RESTART: the
// signal must interrupt the ring-buffer wait). Once stopping, the defaults
// are back, so a second Ctrl-C ends a slow shutdown at once; the file is
// still readable up to its last frame.
void set_handler(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

void set_stop_handlers(void (*handler)(int)) {
  set_handler(SIGINT, handler);
  set_handler(SIGTERM, handler);
}

// A tracker that knows every target alive now, read from /proc.
ProcessTracker seeded_tracker(SystemProcesses& processes, const Targets& t) {
  ProcessTracker tracker(processes);
  const uint64_t now = monotonic_ns();
  size_t seeded = 0;
  for (uint32_t pid : existing_targets(t.system_wide(), t.pids, t.tids)) {
    tracker.seed(processes.read(pid, now));
    // A busy host maps and execs while thousands of processes are read:
    // keep the side band from overflowing meanwhile.
    if (++seeded % 64 == 0)
      tracker.refill();
  }
  return tracker;
}

// The file's header, and the kernel symbols samples will need: kallsyms,
// or nothing when kptr_restrict hides its addresses (then `info` says so,
// and the module names and build-ids are still recorded).
struct Header {
  format::RecordingInfo info;
  KernelSymbolIndex kernel;
};

Header read_header(const RecordOptions& o, const SamplerConfig& config) {
  Header h{describe_host()};
  h.info.command_line = o.argv;
  if (config.sampling) {
    h.info.event = config.sampling->event.name;
    h.info.sample_frequency = config.sampling->rate.frequency;
    h.info.sample_period = config.sampling->rate.period;
  }
  h.info.cpu_count = static_cast<uint32_t>(config.cpus.size());
  h.info.transport = transport_name(config.transport);
  h.info.sampling = config.sampling.has_value();
  if (o.call_graph == format::CallGraph::kDwarf) {
    h.info.call_graph = format::CallGraph::kDwarf;
    h.info.user_stack_bytes = config.user_stack_bytes;
    h.info.user_registers.assign(std::begin(kUserRegisterNumbers), std::end(kUserRegisterNumbers));
    h.info.stack_block_bytes = StackWindows::kBlockBytes;
    h.info.window_reach = StackWindows::kReach;
  }
  if (config.off_cpu) {
    h.info.off_cpu = switch_hook_name(config.off_cpu->hook);
    h.info.off_cpu_min_block_ns = config.off_cpu->min_block_ns;
    h.info.off_cpu_max_block_ns = config.off_cpu->max_block_ns;
    h.info.off_cpu_states = config.off_cpu->states;
  }
  KernelIdentity kernel = read_kernel_identity();
  h.info.kernel_build_id = std::move(kernel.build_id);
  h.info.kernel_modules = std::move(kernel.modules);
  h.kernel = KernelSymbolIndex::read(h.info.kernel_modules);
  if (h.kernel.hidden()) {
    std::fprintf(stderr,
                 "ebprof-record: warning: kernel addresses are hidden (kernel.kptr_restrict): "
                 "kernel frames will be unnamed; record as root or set kernel.kptr_restrict=0\n");
    h.info.kernel_addresses_hidden = true;
    h.kernel = KernelSymbolIndex();
  }
  return h;
}

// The output made anew (with O_EXCL), its header written: the first file,
// or the next one after a switch (--switch-output), the last renamed.
format::RecordingWriter open_next_output(const RecordOptions& o,
                                         const format::RecordingInfo& info) {
  auto writer = format::RecordingWriter::create(create_new(o.output, "-o"), o.output, o.writer);
  writer.write(info);
  return writer;
}

// Like perf: an existing recording is kept as FILE.old rather than lost.
// The output is made anew with O_EXCL, never through a link, and exists
// under its name while it grows, so that a killed recorder leaves it.
// --flight-recorder: a new slice in memory, its header written; `slice`
// keeps a descriptor of it for the flight recorder once it is whole.
format::RecordingWriter open_slice(const RecordOptions& o, const format::RecordingInfo& info,
                                   FlightRecorder& flight, UniqueFd& slice) {
  UniqueFd fd = flight.new_slice();
  slice = UniqueFd(dup(fd.get()));
  if (!slice)
    throw_errno("cannot keep a --flight-recorder slice", errno);
  // Stamped as the merged file it will be part of: its frames go into one
  // as they are, after a Source frame (FlightRecorder::dump).
  format::WriterOptions options = o.writer;
  options.merged = true;
  auto writer = format::RecordingWriter::create(std::move(fd), o.output + " (in memory)", options);
  writer.write(info);
  return writer;
}

// Like perf, an existing recording is kept as FILE.old rather than lost,
// but only once the new one has its header on disk and its command runs
// (commit_output): a full disk, or a command that cannot run, leaves FILE
// as it was. Until then the new file is one beside FILE (ReplacingFile:
// made with O_EXCL, never through a link), removed if it goes no further.
format::RecordingWriter open_output(const RecordOptions& o, const format::RecordingInfo& info,
                                    std::optional<FlightRecorder>& flight, UniqueFd& slice,
                                    std::optional<ReplacingFile>& pending) {
  if (g_stop_signal)
    throw Error(std::string("stopped by ") + sigabbrev_np(g_stop_signal) +
                " before recording began: nothing was written, " + o.output + " is as it was");
  if (flight)
    return open_slice(o, info, *flight, slice);
  pending.emplace(o.output, "-o");  // absent, or a regular file
  auto writer = format::RecordingWriter::create(pending->take_fd(), o.output, o.writer);
  writer.write(info);
  return writer;
}

// The new recording in FILE's place, FILE moved to FILE.old first.
void commit_output(const RecordOptions& o, std::optional<ReplacingFile>& pending) {
  if (!pending)
    return;
  // rename(2) acts on names: a link at FILE.old is replaced, not followed.
  if (rename(o.output.c_str(), (o.output + ".old").c_str()) != 0 && errno != ENOENT)
    throw_errno("cannot move the existing " + o.output + " to " + o.output + ".old", errno);
  pending->commit();
  pending.reset();
}

// One recording, its parts built in the order they depend on each other
// and torn down in reverse: mapping events before /proc is read, both
// before BPF samples, the file once everything that can fail early has.
class Session {
 public:
  explicit Session(const RecordOptions& o)
      : o_(o),
        targets_(resolve_targets(o)),
        config_(sampler_config(o, targets_)),
        tracker_(seeded_tracker(processes_, targets_)),
        sampler_(config_),
        header_(read_header(o, config_)),
        flight_(o.flight_recorder_ns
                    ? std::optional<FlightRecorder>(std::in_place, o.flight_recorder_ns,
                                                    o.flight_recorder_bytes)
                    : std::nullopt),
        writer_(open_output(o, header_.info, flight_, slice_, pending_output_)),
        recorder_(writer_, std::move(header_.kernel), tracker_,
                  o.embed_symbols ? std::optional<SymbolEmbedder>(std::in_place) : std::nullopt,
                  ledger_, header_.info.call_graph) {
    if (o.python)
      recorder_.read_python([this](uint32_t pid, const ebprof_python_proc* entry) {
        sampler_.publish_python(pid, entry);
      });
    if (config_.stack_for_frameless_only)
      recorder_.answer_code_questions([this](const ebprof_code_key& key, uint64_t granules) {
        sampler_.publish_frameless_code(key, granules);
      });
    tracker_.refill();  // loading and verifying took a while
    for (uint32_t pid : targets_.pids) {
      sampler_.add_pid(pid);
      for (uint32_t tid : threads_of(pid))
        sampler_.sample_task(tid);
    }
    for (uint32_t tid : targets_.tids)
      sampler_.add_tid(tid);
    if (o.switch_output)
      switched_.emplace(o.switch_max_files);
    sampler_.start(config_);
    malloc_trim(0);
  }

  int run();

 private:
  bool done(uint64_t now_ns);
  bool switch_due(uint64_t now_ns);
  // --flight-recorder: the slices kept written out as FILE.<UTC time>.
  void dump_flight();
  // --switch-output: the file just ended renamed FILE.<UTC time>, and said so.
  void keep_switched();
  // Ends the file under way (--switch-output) and goes on in a new one.
  void switch_file(uint64_t now_ns);
  // The file's last losses and its end frame, with its own totals.
  void end_file(uint64_t end_ns);
  uint64_t bytes_written() const { return bytes_in_earlier_files_ + writer_.bytes_written(); }
  int exit_status() const;
  void record_until_done();
  void finish();
  void print_summary() const;

  const RecordOptions& o_;
  const Targets targets_;
  const SamplerConfig config_;
  SystemProcesses processes_;
  ProcessTracker tracker_;
  BpfSampler sampler_;
  Header header_;
  // --flight-recorder: the slices kept, and the one being written.
  std::optional<FlightRecorder> flight_;
  UniqueFd slice_;
  std::optional<ReplacingFile> pending_output_;  // until commit_output()
  format::RecordingWriter writer_;
  LossLedger ledger_;
  Recorder recorder_;
  std::optional<ChildProcess> child_;
  std::optional<int> child_status_;          // the workload's wait status, once it ended by itself
  const ProcessWatch watch_{targets_.pids};  // -p: the end comes when they all have ended
  uint64_t deadline_ns_ = UINT64_MAX;
  // --switch-output: the files left so far, and where the one under way began.
  std::optional<SwitchedFiles> switched_;
  uint64_t file_started_ns_ = 0;
  uint64_t bytes_in_earlier_files_ = 0;
  uint64_t lost_events_before_ = 0;  // the tracker's, in earlier files
  uint64_t dumps_ = 0;               // --flight-recorder: files written
};

int Session::run() {
  if (!o_.command.empty()) {
    child_.emplace(ChildProcess::start(o_.command));
    if (targets_.tasks == TaskFilter::kProcesses) {
      sampler_.add_pid(static_cast<uint32_t>(child_->pid()));
      // From its exec on, and inherited by what it starts.
      sampler_.sample_task(static_cast<uint32_t>(child_->pid()), /*on_exec=*/true);
    }
    child_->run();
  }
  commit_output(o_, pending_output_);
  record_until_done();
  set_stop_handlers(SIG_DFL);
  finish();
  print_summary();
  return exit_status();
}

bool Session::done(uint64_t now_ns) {
  if (child_ && !child_status_)
    child_status_ = child_->try_wait();
  return now_ns >= deadline_ns_ || child_status_ || watch_.all_exited();
}

// So that `ebprof-record -- make test && ...` means what it says. A
// workload the recorder stopped (the duration ran out, or a signal
// stopped the recording) did not fail: its recording is what was asked.
int Session::exit_status() const {
  if (!child_status_ || g_stop_signal)
    return 0;
  const int status = *child_status_;
  if (WIFSIGNALED(status)) {
    if (!o_.quiet)
      std::fprintf(stderr, "ebprof-record: the command was killed by SIG%s\n",
                   sigabbrev_np(WTERMSIG(status)));
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

bool Session::switch_due(uint64_t now_ns) {
  if (flight_)
    return now_ns >= file_started_ns_ + flight_->slice_ns();
  if (!o_.switch_output)
    return false;
  switch (o_.switch_output->when) {
    case SwitchOutput::When::kSignal:
      return false;  // the signal alone
    case SwitchOutput::When::kSize:
      return writer_.bytes_written() >= o_.switch_output->bytes;
    case SwitchOutput::When::kTime:
      return now_ns >= file_started_ns_ + o_.switch_output->period_ns;
  }
  return false;
}

// Between two batches, the ring buffer running on: what it holds goes into
// the new file, so no sample is in two files or in none.
void Session::switch_file(uint64_t now_ns) {
  // JIT code found unnamed is named in the file of its samples, if at all.
  recorder_.name_missed_jit();
  recorder_.flush(0, true);
  end_file(now_ns);
  if (flight_)
    flight_->keep(std::move(slice_), file_started_ns_, now_ns);
  else
    keep_switched();
  bytes_in_earlier_files_ += writer_.bytes_written();
  format::RecordingInfo info = header_.info;
  info.start_realtime_ns = realtime_ns();
  info.start_monotonic_ns = now_ns;
  writer_ = flight_ ? open_slice(o_, info, *flight_, slice_) : open_next_output(o_, info);
  recorder_.start_file();
  ledger_.start_file();
  lost_events_before_ = tracker_.lost_events();
  file_started_ns_ = now_ns;
}

void Session::keep_switched() {
  const std::string kept = switched_->keep(o_.output, realtime_ns());
  if (!o_.quiet)
    std::fprintf(stderr, "[ ebprof-record: wrote %s ]\n", kept.c_str());
}

// A dump that cannot be written (a full disk, a planted link at every name
// it tries) costs that dump alone: the window stays in memory for the next.
void Session::dump_flight() {
  FlightRecorder::Dumped d;
  try {
    d = flight_->dump(switched_name(o_.output, realtime_ns()));
  } catch (const Error& e) {
    std::fprintf(stderr,
                 "ebprof-record: warning: --flight-recorder dump not written: %s; recording "
                 "goes on\n",
                 e.what());
    return;
  }
  ++dumps_;
  if (!o_.quiet)
    std::fprintf(stderr, "[ ebprof-record: wrote %s, the last %.1f s%s (%s) ]\n", d.path.c_str(),
                 double(d.span_ns) / 1e9, d.since_dump ? " since the last dump" : "",
                 count_of(d.slices, "slice", "slices").c_str());
}

void Session::end_file(uint64_t end_ns) {
  recorder_.write_losses(end_ns);
  writer_.write(format::RecordingEnd{end_ns, ledger_.file_totals(),
                                     tracker_.lost_events() - lost_events_before_});
  writer_.close();
}

void Session::record_until_done() {
  const uint64_t start_ns = monotonic_ns();
  file_started_ns_ = start_ns;
  if (o_.duration_s > 0)
    deadline_ns_ = start_ns + static_cast<uint64_t>(o_.duration_s * 1e9);
  StatusLine status(o_.quiet, start_ns);
  constexpr uint64_t kLossReportNs = 1'000'000'000;
  uint64_t next_loss_report_ns = start_ns + kLossReportNs;
  const BpfSampler::Handler to_recorder = [this](auto record) { recorder_.on_record(record); };
  // BPF wakes the reader only when a buffer fills: the records committed
  // silently are read every poll. A CPython process's frames are walked
  // from the poll that reads its first sample on, so with Python frames
  // the polls come often enough for a short `python3 -c` to be found
  // before it runs its own code.
  const int poll_ms = o_.python ? 20 : 100;
  while (!g_stop_signal) {
    sampler_.wait(poll_ms);
    // Mapping events first: they precede the samples that need them.
    recorder_.refresh_processes();
    sampler_.consume(to_recorder);
    const uint64_t now = monotonic_ns();
    recorder_.flush(now);
    ledger_.update_kernel(sampler_.losses());
    if (now >= next_loss_report_ns) {
      recorder_.write_losses(now);
      next_loss_report_ns = now + kLossReportNs;
    }
    // SIGUSR2: a new file now (--switch-output, in any mode), the flight
    // recorder's memory written out; without either, not a way to kill
    // a recording by mistake.
    const bool asked = g_switch_signal.exchange(0) != 0;
    if (asked && flight_) {
      switch_file(now);  // the slice under way ends here, to be written with the others
      dump_flight();
    } else if (switch_due(now) || (asked && o_.switch_output)) {
      switch_file(now);
    } else if (asked) {
      std::fprintf(stderr,
                   "ebprof-record: SIGUSR2 ignored: it switches files only with --switch-output "
                   "or --flight-recorder; recording goes on\n");
    }
    if (status.due(now))
      status.show(now, {(now - start_ns) / 1e9, recorder_.stats().samples, bytes_written(),
                        ledger_.dropped()});
    if (done(now))
      break;
  }
}

// What the kernel committed before the stop, the last batch, the losses
// and the end frame.
void Session::finish() {
  // Stopped first: a reader behind the programs (at -F max) would
  // otherwise drain for as long as they run.
  sampler_.stop();
  recorder_.refresh_processes();
  while (sampler_.consume([this](auto record) { recorder_.on_record(record); })) {
  }
  recorder_.name_missed_jit();
  recorder_.flush(0, true);
  ledger_.update_kernel(sampler_.losses());
  const uint64_t end_ns = monotonic_ns();
  end_file(end_ns);
  if (flight_) {
    flight_->keep(std::move(slice_), file_started_ns_, end_ns);
    dump_flight();
  }
  if (switched_)
    keep_switched();
  if (tracker_.lost_events())
    std::fprintf(stderr,
                 "ebprof-record: warning: the kernel dropped %llu mapping events; maps of some "
                 "short-lived processes may be incomplete\n",
                 static_cast<unsigned long long>(tracker_.lost_events()));
}

void Session::print_summary() const {
  if (o_.quiet)
    return;
  std::string partial;
  if (uint64_t n = ledger_.partial())
    partial = ", " + std::to_string(n) + " with partial stacks";
  const RecorderStats& st = recorder_.stats();
  std::string embedded;
  if (size_t binaries = recorder_.embedded_binaries())
    embedded = ", symbols of " + count_of(binaries, "binary", "binaries") + " embedded in " +
               std::to_string(st.embed_ns / 1'000'000) + " ms";
  const std::string off_cpu =
      st.off_cpu ? ", of them " + std::to_string(st.off_cpu) + " intervals off CPU" : "";
  const std::string python =
      recorder_.python_processes()
          ? ", Python frames of " + count_of(recorder_.python_processes(), "process", "processes") +
                " read"
          : "";
  // What frameless_code saves BPF, for whoever measures it.
  std::string copies;
  if (o_.verbose && config_.stack_for_frameless_only && st.samples)
    copies = ", user stack copied for " + std::to_string(st.stack_copies * 100 / st.samples) +
             "% of samples";
  // A power of two, from -F (or -m): said, since the rate chose it.
  const size_t buffer_size = buffer_bytes(config_);
  const std::string buffer = buffer_size >= (1 << 20) ? std::to_string(buffer_size >> 20) + " MiB"
                                                      : std::to_string(buffer_size >> 10) + " KiB";
  const std::string where =
      switched_ ? count_of(switched_->kept(), "file", "files") + " " + o_.output + ".*"
      : flight_ ? "memory, kept in " + count_of(dumps_, "file", "files") + " " + o_.output + ".*"
                : o_.output;
  std::fprintf(
      stderr,
      "[ ebprof-record: wrote %.3f MB to %s (%s%s, %s, %s, %llu lost%s%s%s%s; %s buffer) ]\n",
      bytes_written() / 1e6, where.c_str(), count_of(st.samples, "sample", "samples").c_str(),
      off_cpu.c_str(),
      count_of(recorder_.stack_count(), "stack definition", "stack definitions").c_str(),
      count_of(tracker_.process_count(), "process", "processes").c_str(),
      static_cast<unsigned long long>(ledger_.dropped()), partial.c_str(), embedded.c_str(),
      python.c_str(), copies.c_str(), buffer.c_str());
}

}  // namespace

int run_session(const RecordOptions& options) {
  check_options(options);
  check_output(options.output, "-o");  // now, not after the BPF programs load
  // From the start: a stop asked for while the BPF programs load ends the
  // run before the output is touched, not with a header-only file.
  set_stop_handlers(on_stop_signal);
  set_handler(SIGUSR2, on_switch_signal);
  return Session(options).run();
}

}  // namespace ebprof::record
