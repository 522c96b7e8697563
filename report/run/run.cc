#include "report/run/run.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

#include "common/error.h"
#include "common/output_file.h"
#include "common/text.h"
#include "report/aggregate/aggregate.h"
#include "report/load/facts.h"
#include "report/load/load.h"
#include "report/load/merge.h"
#include "report/load/sample_stream.h"
#include "report/load/summary.h"
#include "report/locate/debuginfod.h"
#include "report/resolve/stack_resolver.h"
#include "report/run/follow.h"
#include "report/run/memory_budget.h"
#include "report/run/slices.h"
#include "report/unwind/dwarf_unwinder.h"
#include "report/unwind/frame_pointer_unwinder.h"
#include "report/write/dump_writer.h"
#include "report/write/frame_text.h"
#include "report/write/info_writer.h"
#include "report/write/script_writer.h"

namespace ebprof::report {
namespace {

void warn(const std::string& message) {
  std::fprintf(stderr, "ebprof-report: warning: %s\n", message.c_str());
}

// What the report says of its own progress on stderr, not a warning.
void say(const std::string& message) {
  std::fprintf(stderr, "ebprof-report: %s\n", message.c_str());
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

// What every report of a run shares: the recordings' names and frames,
// and the stages that name their stacks, so each binary is opened once.
class Stages {
 public:
  explicit Stages(const Plan& plan) : plan_(plan) {}
  Stages(const Stages&) = delete;
  Stages& operator=(const Stages&) = delete;

  // Says, once the report is written, which servers left questions unanswered.
  void finish() {
    if (debuginfod_)
      if (const std::string unanswered = debuginfod_->summary(); !unanswered.empty())
        say(unanswered);
  }

  NameTable names;

  // Settles each batch's stacks as the file streams: what the load and the
  // sample stream hand them to.
  SettleStacks settle() {
    return [this](const Recording& r, const IdRuns<format::UserWindow>& windows,
                  std::span<StackRef> refs) {
      resolver().settle(r, windows, refs);
      settled_ += refs.size();
      say_progress();
    };
  }

  // The recordings of `paths`, numbered after those loaded before: the
  // stages name each recording's stacks apart from every other's.
  const std::vector<Recording>& load(std::span<const std::string> paths) {
    std::vector<Recording>& all =
        recordings_.emplace_back(load_all(paths, plan_.samples, names, settle(), loaded_));
    loaded_ += static_cast<uint32_t>(all.size());
    for (const Recording& r : all)
      // A file still being written ends inside a frame: --follow says so
      // only once it has ended otherwise than by its end frame.
      if (!r.warning.empty() && !(plan_.follow && !r.end))
        warn(r.warning);
    warn_of_unequal_rates(all);
    if (!all.empty() && !all.front().overlap.empty())
      warn(all.front().overlap);
    return all;
  }

  StackResolver& resolver() {
    if (!resolver_)
      make_resolver();
    return *resolver_;
  }

  const Profile& aggregate(std::span<const Recording> of, Unit unit) {
    return profiles_.emplace_back(
        report::aggregate(of, names, resolver(), {plan_.grouping, &plan_.stacks, unit}));
  }

  // The inputs' profile, for every output but script's and diff's.
  const Profile& profile() {
    const std::vector<Recording>& all = load(plan_.inputs);
    check_view(plan_, all);
    const std::span<const Recording> sides[] = {all};
    return aggregate(all, unit_for(plan_, sides));
  }

 private:
  // A report that runs long says, every 10 s, how far it got: a stranger's
  // recording may hold millions of stacks, or CFI that is costly to use.
  void say_progress() {
    constexpr auto kEvery = std::chrono::seconds(10);
    const auto now = std::chrono::steady_clock::now();
    if (now < last_progress_ + kEvery)
      return;
    last_progress_ = now;
    say(string_printf("%llu stacks unwound and named so far, %.0f s in",
                      static_cast<unsigned long long>(settled_),
                      std::chrono::duration<double>(now - started_).count()));
  }
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_progress_ = started_;
  uint64_t settled_ = 0;
  // Added up as equals, samples of other events or rates would mislead.
  static void warn_of_unequal_rates(std::span<const Recording> all) {
    const format::RecordingInfo& first = all.front().info;
    for (const Recording& r : all)
      if (r.info.event != first.event ||
          describe_rate(r.info.sample_frequency, r.info.sample_period) !=
              describe_rate(first.sample_frequency, first.sample_period)) {
        warn(recording_name(r) + " samples " + r.info.event + " " +
             describe_rate(r.info.sample_frequency, r.info.sample_period) + ", " +
             recording_name(all.front()) + " " + first.event + " " +
             describe_rate(first.sample_frequency, first.sample_period) +
             ": their samples are counted as equals");
        return;
      }
  }

  // Files, names and unwinders, made when a report first needs them (dump
  // and merge never do): a recording's native frames are unwound from its
  // copies of the stack where it has them and --unwind asks for it, else
  // from the frame-pointer chain.
  void make_resolver() {
    SymbolizeOptions options = plan_.symbols;
    options.warn = warn;
    debuginfod_ = Debuginfod::from_environment({plan_.debuginfod_timeout_s, say}, warn);
    if (std::shared_ptr<Debuginfod> client = debuginfod_) {
      options.debuginfod = [client](const std::string& build_id) {
        return client->find_debuginfo(build_id);
      };
      options.debuginfod_request = [client](const std::string& build_id) {
        client->request(build_id);
      };
    }
    files_.emplace(options);
    symbolizer_.emplace(options, *files_, std::make_shared<FrameTable>());
    resolver_.emplace(*symbolizer_);
    if (plan_.unwind == UnwindMode::kDwarf)
      resolver_->add(std::make_unique<DwarfUnwinder>(*files_));
    resolver_->add(std::make_unique<FramePointerUnwinder>());
  }

  const Plan& plan_;
  uint32_t loaded_ = 0;                            // recordings loaded so far
  std::deque<std::vector<Recording>> recordings_;  // what load() returned
  std::deque<Profile> profiles_;                   // what aggregate() returned
  std::shared_ptr<Debuginfod> debuginfod_;         // when DEBUGINFOD_URLS is set
  std::optional<FileFinder> files_;
  std::optional<Symbolizer> symbolizer_;
  std::optional<StackResolver> resolver_;
};

void StagesDelete::operator()(Stages* stages) const {
  delete stages;
}

namespace {

void run_info(const Plan& plan, Stages& stages, std::ostream& out) {
  const std::vector<Recording>& all = stages.load(plan.inputs);
  for (const Recording& r : all) {
    // Unfiltered: what the file holds, whatever the report shows of it.
    const Profile p = aggregate(std::span(&r, 1), stages.names, stages.resolver(), {plan.grouping});
    write_info(out, describe_recording(r), unnamed_by_reason(p.stacks),
               stages.resolver().count_unwinding(r));
  }
}

// Every sample of each input in file order, its stack named and filtered
// once per distinct stack, not once per sample.
void run_script(const Plan& plan, Stages& stages, std::ostream& out) {
  for (const std::string& path : plan.inputs) {
    const std::vector<Recording>& sources = stages.load(std::span(&path, 1));
    StackResolver& resolver = stages.resolver();
    std::unordered_map<StackRef, std::optional<FrameView>, StackRefHash> shown;
    stream_samples(
        path, sources, plan.samples, stages.names,
        [&](const Recording& r, const SampleKey& key, const format::Sample& s) {
          auto [it, inserted] = shown.try_emplace(key.stack);
          if (inserted)
            it->second = filter_frames(plan.stacks, resolver.stack(r, key.stack), resolver.table());
          if (!it->second)
            return;
          // perf prints the period of each sample.
          write_script_sample(
              out,
              {stages.names.all()[key.comm], key, s.time_ns, weight_of(r.info, s), r.info.event},
              *it->second);
        },
        stages.settle());
  }
}

void run_diff(const Plan& plan, Stages& stages, std::ostream& out) {
  const std::vector<Recording>& base = stages.load(std::span(plan.inputs).first(1));
  const std::vector<Recording>& now = stages.load(std::span(plan.inputs).subspan(1, 1));
  check_view(plan, base);
  check_view(plan, now);
  const std::span<const Recording> sides[] = {base, now};
  const Unit unit = unit_for(plan, sides);
  const Profile& base_profile = stages.aggregate(base, unit);
  const Profile& new_profile = stages.aggregate(now, unit);
  plan.format->write_diff(out, base_profile, new_profile, plan);
}

void run_profile(const Plan& plan, Stages& stages, std::ostream& out) {
  if (plan.format->streams_samples)
    return run_script(plan, stages, out);
  plan.format->write(out, stages.profile(), plan);
}

void run_merge(const Plan& plan) {
  for (const std::string& in : plan.inputs)
    if (same_file(in, plan.output))
      throw Error("-o " + plan.output +
                  " is one of the recordings being merged: choose another file");
  MergeResult r = merge_recordings(plan.output, plan.inputs);
  for (const std::string& w : r.warnings)
    warn(w);
  std::fprintf(stderr, "ebprof-report: merged %zu files (%llu recordings, %llu samples) into %s\n",
               plan.inputs.size(), static_cast<unsigned long long>(r.sources),
               static_cast<unsigned long long>(r.samples), plan.output.c_str());
}

// The report of `plan` (any command but merge, which writes no report) to `out`.
void write_report(const Plan& plan, Stages& stages, std::ostream& out) {
  if (plan.command == Command::kDump) {
    for (const std::string& in : plan.inputs)
      write_dump(out, in);
  } else if (plan.command == Command::kInfo) {
    run_info(plan, stages, out);
  } else if (plan.command == Command::kDiff) {
    run_diff(plan, stages, out);
  } else {
    if (plan.header) {
      Stages header(plan);
      run_info(plan, header, out);
    }
    run_profile(plan, stages, out);
  }
  stages.finish();
}

// The inputs' bytes so far, to tell a recording that grows from one whose
// recorder is gone.
uint64_t bytes_of(const std::vector<std::string>& paths) {
  uint64_t total = 0;
  for (const std::string& path : paths) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0)
      total += static_cast<uint64_t>(st.st_size);
  }
  return total;
}

// The files --follow reads now: each input's series (a rotation's files
// since the follow began, then the file being written).
std::vector<std::string> followed_files(const std::vector<FollowedSeries>& series) {
  std::vector<std::string> files;
  for (const FollowedSeries& s : series)
    for (std::string& file : s.files())
      files.push_back(std::move(file));
  return files;
}

// --follow: the whole series read again each second (a report of it is a
// fraction of that), the table redrawn, until the recorder wrote its end,
// or the files have not grown for 30 s: a recorder killed leaves no end
// frame, and following it would never end.
void run_follow(const Plan& plan, std::ostream& out) {
  constexpr int kStillSeconds = 30, kRetries = 2;
  const bool terminal = isatty(STDOUT_FILENO);
  int failures = 0;
  std::vector<FollowedSeries> series(plan.inputs.begin(), plan.inputs.end());
  Plan now = plan;
  now.top.following = true;
  uint64_t last_bytes = 0;
  for (int still = 0;; ++still) {
    now.inputs = followed_files(series);
    if (const uint64_t bytes = bytes_of(now.inputs); bytes != last_bytes) {
      last_bytes = bytes;
      still = 0;
    }
    std::ostringstream table;
    bool ended = true;
    try {
      Stages stages(now);  // a report each second, each freed after
      const Profile& p = stages.profile();
      plan.format->write(table, p, now);
      ended = p.summary.ended;
      failures = 0;
    } catch (const Error&) {
      // A rotation's oldest file removed (--switch-max-files) between the
      // listing and the reading: the next second lists again.
      if (++failures > kRetries)
        throw;
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    // Home and clear, as top does; piped, one table after the other.
    out << (terminal ? "\033[H\033[2J" : "") << table.str() << (terminal ? "" : "\n");
    out.flush();
    // Every file ended: the recording, unless a rotation is between
    // writing a file's end and starting the next.
    if (ended) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (followed_files(series) == now.inputs)
        return;
    }
    if (still >= kStillSeconds)
      throw Error(plan.inputs.front() + " has not grown for " + std::to_string(kStillSeconds) +
                  " s and has no end frame: its recorder was stopped or killed; the table above "
                  "is what it holds");
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

// --split: the profile's slices as files of -o's directory.
void run_split(const Plan& plan, Stages& stages) {
  const size_t files = write_slices(
      plan.output, stages.profile(), plan.split_ns, plan.format->slice_extension,
      [&](std::ostream& out, const Profile& slice) { plan.format->write(out, slice, plan); });
  stages.finish();
  std::fprintf(stderr, "ebprof-report: wrote %s to %s\n",
               count_of(files, "profile", "profiles").c_str(), plan.output.c_str());
}

void run_planned(const Plan& plan, Stages& stages) {
  if (plan.command == Command::kMerge)
    return run_merge(plan);
  // -o naming an input (-i defaults to ebprof.data) would truncate the
  // recording before reading it.
  for (const std::string& in : plan.inputs)
    if (!plan.output.empty() && same_file(in, plan.output))
      throw Error("-o " + plan.output + " is the recording being read: choose another file");
  const auto report = [&](std::ostream& out) {
    if (plan.follow)
      run_follow(plan, out);
    else
      write_report(plan, stages, out);
  };
  switch (plan.sink) {
    case Sink::kDirectory:
      return run_split(plan, stages);
    case Sink::kFile:
      // Written beside the file and renamed over it when complete, so a
      // report that fails leaves an existing file as it was.
      return write_replacing(plan.output, "-o", report);
    case Sink::kStdout:
      break;
  }
  // As gzip does: bytes a terminal would garble, and a user meant to keep.
  if (plan.format->binary && plan.command != Command::kInfo && plan.command != Command::kDump &&
      isatty(STDOUT_FILENO))
    throw Error(std::string("--format ") + plan.format->name +
                " is binary, not for a terminal: write it with -o FILE, or redirect it");
  std::ios::sync_with_stdio(false);
  report(std::cout);
  std::cout.flush();
  if (!std::cout)
    throw Error("cannot write the report: the disk is full or the output was closed");
}

}  // namespace

void write_report(const Plan& plan, std::ostream& out) {
  Stages stages(plan);
  write_report(plan, stages, out);
}

KeptStages run_report(const Plan& plan) {
  MemoryBudget budget(plan.max_memory);
  auto over_budget = [&] {
    budget.lift();
    const double mb = double(budget.bytes()) / (1 << 20);
    return Error("out of memory: the report needs more than its " +
                 (mb < 1024 ? string_printf("%.0f MB", mb) : string_printf("%.1f GB", mb / 1024)) +
                 " (--max-memory sets it; --time, --pid and --comm read less of a recording)");
  };
  try {
    KeptStages stages(new Stages(plan));
    run_planned(plan, *stages);
    return stages;
  } catch (const std::bad_alloc&) {
    throw over_budget();
  } catch (const std::system_error& e) {
    // A thread's stack is memory too.
    if (e.code() != std::errc::resource_unavailable_try_again &&
        e.code() != std::errc::not_enough_memory)
      throw;
    throw over_budget();
  }
}

}  // namespace ebprof::report
