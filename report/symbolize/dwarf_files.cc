#include "report/symbolize/dwarf_files.h"

#include <algorithm>
#include <exception>

namespace ebprof::report {

DwarfFiles::~DwarfFiles() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : workers_)
    t.join();
}

void DwarfFiles::prefetch(const std::string& path) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = files_.try_emplace(path);
  if (!inserted)
    return;
  it->second = std::make_unique<File>(File{.path = path});
  queue_.push_back(it->second.get());
  // The report's own thread keeps a core; the others open a file each, up
  // to 4 at once (a report seldom has more large DWARF files than that).
  const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 2, 5) - 1;
  if (workers_.size() < workers)
    workers_.emplace_back(&DwarfFiles::work, this);
  changed_.notify_one();
}

DwarfLines* DwarfFiles::get(const std::string& path) {
  std::unique_lock lock(mutex_);
  auto [it, inserted] = files_.try_emplace(path);
  if (inserted)
    it->second = std::make_unique<File>(File{.path = path});
  File& file = *it->second;
  if (file.state == State::kQueued)
    open(file, lock);  // a worker would only get to it later
  changed_.wait(lock, [&] { return file.state == State::kOpen; });
  return file.lines ? &*file.lines : nullptr;
}

void DwarfFiles::open(File& file, std::unique_lock<std::mutex>& lock) {
  file.state = State::kOpening;
  lock.unlock();
  std::optional<DwarfLines> lines;
  try {
    lines = DwarfLines::open(file.path, cache_);
  } catch (const std::exception&) {
    // On a worker nothing could catch it: a file that cannot be read is
    // a file without DWARF, as for any other failure to open it.
  }
  lock.lock();
  file.lines = std::move(lines);
  file.state = State::kOpen;
  changed_.notify_all();
}

void DwarfFiles::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_)
      return;
    File* file = queue_.front();
    queue_.pop_front();
    if (file->state == State::kQueued)
      open(*file, lock);
  }
}

}  // namespace ebprof::report
