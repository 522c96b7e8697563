#include "record/process_tracker.h"

#include <algorithm>

#include "format/lookup.h"

namespace ebprof::record {

void insert_mapping(std::vector<format::Mapping>& mappings, format::Mapping m) {
  std::vector<format::Mapping> out;
  out.reserve(mappings.size() + 2);
  for (format::Mapping& old : mappings) {
    if (old.end <= m.start || old.start >= m.end) {
      out.push_back(std::move(old));
      continue;
    }
    if (old.start < m.start) {  // the part below survives
      format::Mapping below = old;
      below.end = m.start;
      out.push_back(std::move(below));
    }
    if (old.end > m.end) {  // and the part above, further into the file
      old.file_offset += m.end - old.start;
      old.start = m.end;
      out.push_back(std::move(old));
    }
  }
  out.push_back(std::move(m));
  format::sort_by_start(out);
  mappings = std::move(out);
}

void ProcessTracker::seed(format::ProcessInfo info) {
  Process& p = processes_[info.pid];
  p.comm = std::move(info.comm);
  p.mappings = std::move(info.mappings);
  p.maps_error = std::move(info.maps_error);
  p.place = std::move(info.place);
  p.changed_at_ns = p.read_at_ns = info.captured_at_ns;
  p.read_once = true;
}

void ProcessTracker::refill() {
  if (!source_->follows_events())
    return;
  if (head_ > 0 && head_ * 2 >= queue_.size()) {
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<ptrdiff_t>(head_));
    head_ = 0;
  }
  const size_t first = queue_.size();
  source_->drain_events(queue_);
  for (size_t i = first; i < queue_.size(); ++i)
    if (queue_[i].kind == TaskEvent::Kind::kLost)
      lost_events_ += queue_[i].lost;
  // Events of a later drain can predate the last ones of an earlier drain by
  // a few microseconds (CPUs interleave): keep the queue in time order.
  std::inplace_merge(queue_.begin() + static_cast<ptrdiff_t>(head_),
                     queue_.begin() + static_cast<ptrdiff_t>(first), queue_.end(),
                     [](const TaskEvent& a, const TaskEvent& b) { return a.time_ns < b.time_ns; });
}

void ProcessTracker::apply_until(uint64_t time_ns) {
  while (head_ < queue_.size() && queue_[head_].time_ns <= time_ns)
    apply(queue_[head_++]);
}

void ProcessTracker::apply(const TaskEvent& e) {
  switch (e.kind) {
    case TaskEvent::Kind::kFork: {
      // A fresh process: whatever had this pid before is gone.
      Process child;
      if (auto parent = processes_.find(e.parent); parent != processes_.end()) {
        child.comm = parent->second.comm;
        child.mappings = parent->second.mappings;
        child.place = parent->second.place;
        child.place.namespace_pid = 0;  // its own; read when it is written
      } else {
        // /proc tells, on its first sample, what the events cannot.
        child.maps_error = format::kMapsErrorForkedUnread;
        child.recheck = true;
      }
      child.changed_at_ns = e.time_ns;
      processes_[e.pid] = std::move(child);
      break;
    }
    case TaskEvent::Kind::kExec: {
      Process& p = processes_[e.pid];
      p.comm = e.comm;
      p.mappings.clear();  // a new address space; its mmaps follow
      p.maps_error.clear();
      p.changed_at_ns = e.time_ns;
      p.dirty = true;
      p.recheck = false;
      // A thread other than the leader can exec: the leader's EXIT came
      // first, and the process lives on.
      p.exited_at_ns = 0;
      break;
    }
    case TaskEvent::Kind::kMmap: {
      auto it = processes_.find(e.pid);
      if (it == processes_.end())
        break;  // never seen born, never seeded: /proc will tell when sampled
      Process& p = it->second;
      p.exited_at_ns = 0;  // mapping, so alive (the leader alone may have exited)
      // JITs flip W^X protections on the same range over and over: only a
      // real change is worth a new capture.
      // What the tracker added to a written mapping (its debuglink, a
      // build-id read from the file) is not a difference.
      const format::Mapping* same = format::find_mapping(p.mappings, e.mapping.start);
      if (same && same->start == e.mapping.start && same->end == e.mapping.end &&
          same->file_offset == e.mapping.file_offset && same->path == e.mapping.path &&
          (e.mapping.build_id.empty() || same->build_id == e.mapping.build_id))
        break;
      insert_mapping(p.mappings, e.mapping);
      p.maps_error.clear();
      p.changed_at_ns = e.time_ns;
      p.dirty = true;
      break;
    }
    case TaskEvent::Kind::kExit:
      // The leader's exit; the process may live on in other threads, which
      // the next exec, mmap or sample shows.
      if (auto it = processes_.find(e.pid); it != processes_.end())
        it->second.exited_at_ns = e.time_ns;
      break;
    case TaskEvent::Kind::kLost:
      break;  // counted when drained
  }
}

void ProcessTracker::advance(uint64_t time_ns) {
  apply_until(time_ns);
  if (time_ns >= swept_at_ns_ + kSweepIntervalNs) {
    swept_at_ns_ = time_ns;
    for (auto& [pid, p] : processes_)
      if (!p.exited_at_ns && !source_->alive(pid))
        p.exited_at_ns = time_ns;
  }
  std::erase_if(processes_, [&](const auto& entry) {
    uint64_t exited = entry.second.exited_at_ns;
    return exited != 0 && exited + kKeepExitedNs < time_ns;
  });
}

void ProcessTracker::read_proc(uint32_t pid, Process& p, uint64_t now_ns) {
  format::ProcessInfo info = source_->read(pid, now_ns);
  p.read_at_ns = now_ns;
  p.read_once = true;
  p.recheck = false;
  // A re-read that finds nothing (the process is exiting, or gone) adds no
  // information and must not shadow maps that were known.
  if (info.mappings.empty() && !p.mappings.empty())
    return;
  format::sort_by_start(info.mappings);
  // Nothing changed (the unresolved address is junk from a broken frame
  // chain, say): writing the same maps again would only cost space.
  if (p.ever_written && info.mappings == p.mappings)
    return;
  p.comm = std::move(info.comm);
  p.mappings = std::move(info.mappings);
  p.maps_error = std::move(info.maps_error);
  if (info.place.pid_namespace)
    p.place = std::move(info.place);
  p.changed_at_ns = now_ns;
  p.dirty = true;
}

bool ProcessTracker::maps_all(const Process& p, std::span<const uint64_t> user) const {
  return std::all_of(user.begin(), user.end(),
                     [&](uint64_t ip) { return format::find_mapping(p.mappings, ip) != nullptr; });
}

format::ProcessInfo ProcessTracker::capture(uint32_t pid, Process& p) {
  // A pid's captures must be written in time order (the report picks the
  // latest at or before a sample). A mapping event drained late can date
  // a change before the last capture written: it then counts from there.
  p.written_at_ns = std::max(p.changed_at_ns, p.written_at_ns);
  format::ProcessInfo info{pid, p.comm, p.written_at_ns, p.mappings, p.maps_error, p.place};
  source_->describe(pid, info);
  p.mappings = info.mappings;
  p.place = info.place;
  p.dirty = false;
  written_ += !p.ever_written;
  p.ever_written = true;
  return info;
}

std::optional<format::ProcessInfo> ProcessTracker::observe(uint32_t pid,
                                                           std::span<const uint64_t> user,
                                                           bool new_stack, uint64_t time_ns) {
  if (pid == 0)
    return std::nullopt;  // the idle task has no process to read
  apply_until(time_ns);
  auto it = processes_.find(pid);
  if (it == processes_.end()) {
    // Born after the last refill, most likely: its fork and exec are in the
    // side band already.
    refill();
    apply_until(time_ns);
    it = processes_.find(pid);
    if (it == processes_.end()) {
      it = processes_.try_emplace(pid).first;
      read_proc(pid, it->second, time_ns);
    }
  }
  Process& p = it->second;
  if (p.exited_at_ns && time_ns > p.exited_at_ns)
    p.exited_at_ns = 0;  // sampled after its leader's exit: alive
  if (!p.dirty && new_stack && !p.recheck && !maps_all(p, user)) {
    refill();
    apply_until(time_ns);
    // Only incomplete knowledge (no side band, dropped events, a process
    // forked before it was seen) leaves an address unexplained that /proc
    // could explain; otherwise it is junk from a broken frame chain.
    p.recheck =
        !p.dirty && (!source_->follows_events() || lost_events_ > 0 || !p.maps_error.empty());
  }
  // A needed re-read that is rate-limited now happens on a later sample of
  // the process, stack new or not.
  if (p.recheck && (!p.read_once || time_ns >= p.read_at_ns + kRereadIntervalNs))
    read_proc(pid, p, time_ns);
  if (!p.dirty)
    return std::nullopt;
  return capture(pid, p);
}

void ProcessTracker::catch_up(uint32_t pid, uint64_t leaf, uint64_t time_ns) {
  apply_until(time_ns);
  if (pid == 0)
    return;
  auto it = processes_.find(pid);
  if (it != processes_.end() && (leaf == 0 || format::find_mapping(it->second.mappings, leaf)))
    return;
  refill();
  apply_until(time_ns);
}

const format::ProcessPlace* ProcessTracker::place(uint32_t pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? nullptr : &it->second.place;
}

const format::Mapping* ProcessTracker::mapping_at(uint32_t pid, uint64_t ip) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? nullptr : format::find_mapping(it->second.mappings, ip);
}

}  // namespace ebprof::record
