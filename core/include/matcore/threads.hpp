// matcore: threads that may not be granted. Creating a thread fails when the process is out of
// resources (a low per-user process limit, RLIMIT_AS too small for a stack): matcore then does
// that thread's share in the calling thread. Work is always split by index, never by which
// thread runs it, so the results are the same whatever was granted.
#pragma once
#include <algorithm>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace mc {

/// The number of worker threads to use: `requested`, or every core when it is 0.
inline unsigned thread_count(unsigned requested) {
  return requested ? requested : std::max(1u, std::thread::hardware_concurrency());
}

/// Runs fn(t) for every t in [0, n), on up to n threads; the shares whose thread could not be
/// created run in the calling thread. The first exception (lowest t) is rethrown after all
/// shares have finished.
template <class F>
void run_parallel(unsigned n, F&& fn) {
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> err(n);
  std::vector<unsigned> inline_shares;
  auto guarded = [&](unsigned t) {
    try {
      fn(t);
    } catch (...) {
      err[t] = std::current_exception();
    }
  };
  for (unsigned t = 1; t < n; ++t) {
    try {
      pool.emplace_back(guarded, t);
    } catch (const std::system_error&) {
      inline_shares.push_back(t);
    }
  }
  guarded(0);
  for (unsigned t : inline_shares) guarded(t);
  for (std::thread& th : pool) th.join();
  for (auto& e : err)
    if (e) std::rethrow_exception(e);
}

/// One background task (e.g. evaluate chunk i while chunk i+1 is read): a thread when one can
/// be created, else the task runs at once in the caller. The task must not throw.
class Background {
 public:
  template <class F>
  void start(F&& f) {
    join();
    try {
      th_ = std::thread(f);
    } catch (const std::system_error&) {
      f();
    }
  }
  /// A thread or nothing (for optional work such as a progress bar): false when none was granted.
  template <class F>
  bool try_start(F&& f) {
    join();
    try {
      th_ = std::thread(f);
      return true;
    } catch (const std::system_error&) {
      return false;
    }
  }
  void join() {
    if (th_.joinable()) th_.join();
  }
  bool running() const { return th_.joinable(); }
  ~Background() { join(); }

 private:
  std::thread th_;
};

}  // namespace mc
