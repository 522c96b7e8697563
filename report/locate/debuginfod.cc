#include "report/locate/debuginfod.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cstdlib>

namespace ebprof::report {
namespace {

// libdebuginfod brings libcurl and its TLS and LDAP libraries: linking it
// tripled every report's start-up for a feature few runs ask for. It is
// loaded on first use instead, as elfutils' own libdw does.
struct Library {
  decltype(&debuginfod_begin) begin = nullptr;
  decltype(&debuginfod_find_debuginfo) find_debuginfo = nullptr;
  decltype(&debuginfod_end) end = nullptr;
  decltype(&debuginfod_set_progressfn) set_progressfn = nullptr;
  decltype(&debuginfod_set_user_data) set_user_data = nullptr;
  decltype(&debuginfod_get_user_data) get_user_data = nullptr;
};

const Library* library() {
  static const Library lib = [] {
    Library l;
    void* handle = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      return l;
    l.begin = reinterpret_cast<decltype(l.begin)>(dlsym(handle, "debuginfod_begin"));
    l.find_debuginfo =
        reinterpret_cast<decltype(l.find_debuginfo)>(dlsym(handle, "debuginfod_find_debuginfo"));
    l.end = reinterpret_cast<decltype(l.end)>(dlsym(handle, "debuginfod_end"));
    l.set_progressfn =
        reinterpret_cast<decltype(l.set_progressfn)>(dlsym(handle, "debuginfod_set_progressfn"));
    l.set_user_data =
        reinterpret_cast<decltype(l.set_user_data)>(dlsym(handle, "debuginfod_set_user_data"));
    l.get_user_data =
        reinterpret_cast<decltype(l.get_user_data)>(dlsym(handle, "debuginfod_get_user_data"));
    return l;
  }();
  return lib.begin && lib.find_debuginfo && lib.end && lib.set_progressfn && lib.set_user_data &&
                 lib.get_user_data
             ? &lib
             : nullptr;
}

struct ClientEnd {
  void operator()(debuginfod_client* client) const { library()->end(client); }
};

}  // namespace

std::unique_ptr<Debuginfod> Debuginfod::from_environment(
    Options options, const std::function<void(const std::string&)>& warn) {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  if (!urls || !*urls)
    return nullptr;
  if (!library()) {
    if (warn)
      warn(
          "DEBUGINFOD_URLS is set but libdebuginfod.so.1 cannot be loaded: apt-get install "
          "libdebuginfod1");
    return nullptr;
  }
  return std::unique_ptr<Debuginfod>(new Debuginfod(std::move(options)));
}

Debuginfod::~Debuginfod() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;  // transfers under way see it in their progress callback
  }
  changed_.notify_all();
  for (std::thread& t : workers_)
    t.join();
}

bool Debuginfod::past_deadline() const {
  return stopping_ || (deadline_ && std::chrono::steady_clock::now() >= *deadline_);
}

void Debuginfod::request(const std::string& build_id) {
  if (build_id.empty())
    return;
  std::lock_guard lock(mutex_);
  if (!queries_.try_emplace(build_id).second)
    return;
  if (!deadline_)
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(options_.deadline_s));
  queue_.push_back(build_id);
  if (workers_.size() < std::min(kThreads, queries_.size()))
    workers_.emplace_back(&Debuginfod::work, this);
  changed_.notify_one();
}

void Debuginfod::work() {
  std::unique_ptr<debuginfod_client, ClientEnd> client(library()->begin());
  if (client) {
    library()->set_user_data(client.get(), this);
    // Called while a transfer waits (at least every second): non-zero
    // abandons it.
    library()->set_progressfn(client.get(), [](debuginfod_client* c, long, long) {
      auto* self = static_cast<Debuginfod*>(library()->get_user_data(c));
      std::lock_guard lock(self->mutex_);
      return self->past_deadline() ? 1 : 0;
    });
  }
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_)
      return;
    const std::string build_id = std::move(queue_.front());
    queue_.pop_front();
    std::string path;
    bool answered = false;
    if (client && !past_deadline()) {
      lock.unlock();
      char* found = nullptr;
      const int fd = library()->find_debuginfo(
          client.get(), reinterpret_cast<const unsigned char*>(build_id.data()),
          static_cast<int>(build_id.size()), &found);
      if (fd >= 0) {
        close(fd);
        path = found ? found : "";
      }
      std::free(found);
      lock.lock();
      // Not found is an answer too; running out of time is not.
      answered = fd >= 0 || !past_deadline();
    }
    Query& q = queries_[build_id];
    q.done = true;
    q.answered = answered;
    q.path = std::move(path);
    changed_.notify_all();
  }
}

std::string Debuginfod::find_debuginfo(const std::string& build_id) {
  if (build_id.empty())
    return "";
  request(build_id);
  std::unique_lock lock(mutex_);
  const Query& q = queries_[build_id];
  // A couple of seconds, then the wait is said once, with what ends it.
  if (!changed_.wait_for(lock, std::chrono::seconds(2), [&] { return q.done; }) && !said_waiting_ &&
      options_.say) {
    said_waiting_ = true;
    size_t pending = 0;
    for (const auto& [id, query] : queries_)
      pending += !query.done;
    options_.say("waiting for debuginfod servers (" + std::to_string(pending) +
                 " build-ids asked), " + std::to_string(static_cast<int>(options_.deadline_s)) +
                 " s at most in all: --debuginfod-timeout SECONDS changes that");
  }
  // The deadline is the report's too: a transfer libdebuginfod has not
  // abandoned yet (it asks its progress callback about once a second, once
  // per server) no longer holds the report (30 s ran to 34-35).
  changed_.wait_until(lock, *deadline_, [&] { return q.done; });
  return q.done ? q.path : "";
}

std::string Debuginfod::summary() const {
  std::lock_guard lock(mutex_);
  size_t found = 0, unanswered = 0;
  for (const auto& [id, q] : queries_) {
    found += !q.path.empty();
    unanswered += !q.done || !q.answered;  // not done: still being given up on
  }
  if (unanswered == 0)
    return "";
  return "debuginfod: " + std::to_string(queries_.size()) + " build-ids asked, " +
         std::to_string(found) + " found, " + std::to_string(unanswered) +
         " unanswered within the " + std::to_string(static_cast<int>(options_.deadline_s)) +
         " s deadline (--debuginfod-timeout): their binaries are named without debuginfo";
}

}  // namespace ebprof::report
