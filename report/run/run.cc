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
#include "report/load/merge.h"
#include "report/load/sample_stream.h"
#include "report/load/summary.h"
#include "report/locate/debuginfod.h"
#include "report/run/memory_budget.h"
#include "report/symbolize/symbolizer.h"
#include "report/write/dump_writer.h"
#include "report/write/frame_text.h"
#include "report/write/info_writer.h"
#include "report/write/pprof_writer.h"
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

// What every report of the plan shares: the recordings' names and frames,
// and one symbolizer, so each binary is opened once.
struct Stages {
  explicit Stages(const Plan& plan) : free_at_end(plan.free_at_end) {}
  Stages(Stages&&) = default;
  ~Stages() {
    if (debuginfod)
      if (const std::string unanswered = debuginfod->summary(); !unanswered.empty())
        say(unanswered);
    if (free_at_end)
      return;
    // Moved, not copied: what it all points to stays where it is.
    static auto* kept = new std::vector<Stages*>;  // reachable: no leak report
    kept->push_back(new Stages(std::move(*this)));
  }

  bool free_at_end = true;
  NameTable names;
  std::shared_ptr<FrameTable> frames = std::make_shared<FrameTable>();
  std::unique_ptr<Symbolizer> symbolizer;
  std::shared_ptr<Debuginfod> debuginfod;         // the symbolizer's, when DEBUGINFOD_URLS is set
  std::deque<std::vector<Recording>> recordings;  // what load() returned
  std::deque<Profile> profiles;                   // what aggregate() returned

  // Unwinds windows as the file streams (or, with --unwind fp, leaves them
  // out): what the load and the sample stream settle windows with.
  SettleWindows settle(const Plan& plan) {
    if (!plan.grouping.windows)
      return [](const Recording&, const IdRuns<format::UserWindow>&, std::span<StackRef> refs) {
        for (StackRef& ref : refs)
          ref.window = kNoWindow;
      };
    return [this, &plan](const Recording& r, const IdRuns<format::UserWindow>& windows,
                         std::span<StackRef> refs) {
      Symbolizer& s = symbolize(plan);
      s.unwinder().unwind_all(r, windows, refs);
      for (const StackRef& ref : refs)
        s.prepare(r, ref);
    };
  }

  const std::vector<Recording>& load(const Plan& plan, std::span<const std::string> paths) {
    const LoadHooks hooks{
        // The DWARF the names will need starts opening as the stacks go past.
        .stack_seen = [&](const Recording& r,
                          const StackRef& ref) { symbolize(plan).prepare(r, ref); },
        .settle_windows = settle(plan),
    };
    std::vector<Recording>& all =
        recordings.emplace_back(load_all(paths, plan.samples, names, hooks));
    for (const Recording& r : all)
      // A file still being written ends inside a frame: --follow says so
      // only once it has ended otherwise than by its end frame.
      if (!r.warning.empty() && !(plan.follow && !r.end))
        warn(r.warning);
    // Added up as equals, samples of other events or rates would mislead.
    const format::RecordingInfo& first = all.front().info;
    for (const Recording& r : all)
      if (r.info.event != first.event ||
          describe_rate(r.info.sample_frequency, r.info.sample_period) !=
              describe_rate(first.sample_frequency, first.sample_period)) {
        warn(r.path + " samples " + r.info.event + " " +
             describe_rate(r.info.sample_frequency, r.info.sample_period) + ", " +
             all.front().path + " " + first.event + " " +
             describe_rate(first.sample_frequency, first.sample_period) +
             ": their samples are counted as equals");
        break;
      }
    return all;
  }

  Symbolizer& symbolize(const Plan& plan) {
    if (!symbolizer) {
      SymbolizeOptions options = plan.symbols;
      options.warn = warn;
      debuginfod = Debuginfod::from_environment({plan.debuginfod_timeout_s, say}, warn);
      if (std::shared_ptr<Debuginfod> client = debuginfod) {
        options.debuginfod = [client](const std::string& build_id) {
          return client->find_debuginfo(build_id);
        };
        options.debuginfod_request = [client](const std::string& build_id) {
          client->request(build_id);
        };
      }
      symbolizer = std::make_unique<Symbolizer>(options, frames);
    }
    return *symbolizer;
  }

  const Profile& aggregate(const Plan& plan, std::span<const Recording> of, Unit unit) {
    return profiles.emplace_back(
        report::aggregate(of, names, symbolize(plan), {plan.grouping, &plan.stacks, unit}));
  }

  // The inputs' profile, for every output but script's and diff's.
  const Profile& profile(const Plan& plan) {
    const std::vector<Recording>& all = load(plan, plan.inputs);
    check_view(plan, all);
    const std::span<const Recording> sides[] = {all};
    return aggregate(plan, all, unit_for(plan, sides));
  }
};

void run_info(const Plan& plan, std::ostream& out) {
  Stages stages(plan);
  const std::vector<Recording>& all = stages.load(plan, plan.inputs);
  for (const Recording& r : all) {
    const Profile p =
        report::aggregate(std::span(&r, 1), stages.names, stages.symbolize(plan), {plan.grouping});
    write_info(out, describe_recording(r), unnamed_by_reason(p.stacks),
               count_unwinding(r, stages.symbolize(plan).unwinder()));
  }
}

// Every sample of each input in file order, its stack named and filtered
// once per distinct stack, not once per sample.
void run_script(const Plan& plan, std::ostream& out) {
  for (const std::string& path : plan.inputs) {
    Stages stages(plan);
    const std::vector<Recording>& sources = stages.load(plan, std::span(&path, 1));
    Symbolizer& symbolizer = stages.symbolize(plan);
    std::unordered_map<StackRef, std::optional<FrameView>, StackRefHash> shown;
    stream_samples(
        path, sources, plan.samples, stages.names,
        [&](const Recording& r, const SampleKey& key, const format::Sample& s) {
          auto [it, inserted] = shown.try_emplace(key.stack);
          if (inserted)
            it->second = filter_frames(plan.stacks, symbolizer.stack(r, key.stack), *stages.frames);
          if (!it->second)
            return;
          // perf prints the period of each sample.
          const uint64_t period = std::max<uint64_t>(sample_weight(r.info), 1);
          write_script_sample(out,
                              {stages.names.all()[key.comm], key, s.time_ns,
                               s.blocked_ns ? s.blocked_ns : period, r.info.event},
                              *it->second);
        },
        stages.settle(plan));
  }
}

void run_diff(const Plan& plan, std::ostream& out) {
  Stages stages(plan);
  const std::vector<Recording>& base = stages.load(plan, std::span(plan.inputs).first(1));
  const std::vector<Recording>& now = stages.load(plan, std::span(plan.inputs).subspan(1, 1));
  check_view(plan, base);
  check_view(plan, now);
  const std::span<const Recording> sides[] = {base, now};
  const Unit unit = unit_for(plan, sides);
  const Profile& base_profile = stages.aggregate(plan, base, unit);
  const Profile& new_profile = stages.aggregate(plan, now, unit);
  plan.format->write_diff(out, base_profile, new_profile, plan);
}

void run_profile(const Plan& plan, std::ostream& out) {
  if (!plan.format->write) {
    run_script(plan, out);
    return;
  }
  Stages stages(plan);
  plan.format->write(out, stages.profile(plan), plan);
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

}  // namespace

void write_report(const Plan& plan, std::ostream& out) {
  switch (plan.command) {
    case Command::kDump:
      for (const std::string& in : plan.inputs)
        write_dump(out, in);
      return;
    case Command::kInfo:
      return run_info(plan, out);
    case Command::kDiff:
      return run_diff(plan, out);
    case Command::kReport:
    case Command::kMerge:
      if (plan.header)
        run_info(plan, out);
      return run_profile(plan, out);
  }
}

namespace {

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

// --follow: the whole file read again each second (a report of it is a
// fraction of that), the table redrawn, until the recorder wrote its end,
// or the file has not grown for 30 s: a recorder killed leaves no end
// frame, and following it would never end.
void run_follow(const Plan& given, std::ostream& out) {
  constexpr int kStillSeconds = 30;
  Plan plan = given;
  plan.free_at_end = true;  // a report each second
  const bool terminal = isatty(STDOUT_FILENO);
  uint64_t last_bytes = 0;
  for (int still = 0;; ++still) {
    if (const uint64_t bytes = bytes_of(plan.inputs); bytes != last_bytes) {
      last_bytes = bytes;
      still = 0;
    }
    std::ostringstream table;
    bool ended = true;
    {
      Stages stages(plan);
      plan.format->write(table, stages.profile(plan), plan);
      for (const Recording& r : stages.recordings.back())
        ended &= r.end.has_value();
    }
    // Home and clear, as top does; piped, one table after the other.
    out << (terminal ? "\033[H\033[2J" : "") << table.str() << (terminal ? "" : "\n");
    out.flush();
    if (ended)
      return;
    if (still >= kStillSeconds)
      throw Error(plan.inputs.front() + " has not grown for " + std::to_string(kStillSeconds) +
                  " s and has no end frame: its recorder was stopped or killed; the table above "
                  "is what it holds");
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

// --split: files into -o's directory rather than one stream.
void run_split(const Plan& plan) {
  Stages stages(plan);
  const size_t files =
      write_pprof_slices(plan.output, stages.profile(plan), plan.split_ns, plan.pprof_labels);
  std::fprintf(stderr, "ebprof-report: wrote %s to %s\n",
               count_of(files, "profile", "profiles").c_str(), plan.output.c_str());
}

void run_planned(const Plan& plan) {
  if (plan.command == Command::kMerge)
    return run_merge(plan);
  if (plan.split_ns)
    return run_split(plan);
  // -o naming an input (-i defaults to ebprof.data) would truncate the
  // recording before reading it.
  for (const std::string& in : plan.inputs)
    if (!plan.output.empty() && same_file(in, plan.output))
      throw Error("-o " + plan.output + " is the recording being read: choose another file");
  const auto report = [&](std::ostream& out) {
    if (plan.follow)
      run_follow(plan, out);
    else
      write_report(plan, out);
  };
  // -o: written beside the file and renamed over it when complete, so a
  // report that fails leaves an existing file as it was.
  if (!plan.output.empty())
    return write_replacing(plan.output, "-o", report);
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

void run_report(const Plan& plan) {
  MemoryBudget budget(plan.max_memory);
  auto over_budget = [&] {
    budget.lift();
    const double mb = double(budget.bytes()) / (1 << 20);
    return Error("out of memory: the report needs more than its " +
                 (mb < 1024 ? string_printf("%.0f MB", mb) : string_printf("%.1f GB", mb / 1024)) +
                 " (--max-memory sets it; --time, --pid and --comm read less of a recording)");
  };
  try {
    run_planned(plan);
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
