// ThreadPool: worker threads for the work a movement runs off the caller's
// thread (providers' I/O, Python _copy hooks), and the one process-wide pool
// (docs/threading.md).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace strideweave {

// A fixed set of worker threads running submitted tasks in submission order
// (the first free worker takes the oldest task). The pool's own lock is never
// held while a task runs, so a task may submit further tasks.
//
// A task must handle its own errors: an exception escaping a task ends the
// process (std::terminate), as one escaping a std::thread does. Thread
// cancellation (pthread_exit, forced unwinding) passes through the workers
// and ends only the worker it runs on.
class ThreadPool {
 public:
  // Starts `threads` workers. Throws ValueError unless 1 <= threads <= kMaxThreads.
  explicit ThreadPool(int threads);

  // Runs every task submitted before it, then joins the workers. Must not be
  // called from one of this pool's workers.
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Queues `task`; returns at once. Thread-safe.
  void submit(std::function<void()> task);

  // Blocks until every task submitted before the call has finished (tasks
  // submitted meanwhile by other threads or by those tasks are waited for
  // too). Must not be called from one of this pool's workers.
  void wait_idle();

  int threads() const noexcept { return static_cast<int>(workers_.size()); }

  static constexpr int kMaxThreads = 1024;

 private:
  void work();

  std::mutex mu_;
  std::condition_variable task_ready_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> queue_;
  int64_t unfinished_ = 0;  // queued plus running tasks
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// The process-wide pool: started on first use, never destroyed. Its workers
// are never joined at exit, so process exit cannot wait on a task; they end
// with the process. (Static destructors cannot race with them: the pool and
// everything its workers touch are never destroyed.) A child created by
// fork() starts its own pool on first use: the parent's workers do not exist
// there.
ThreadPool& process_pool();

// The number of workers of the process-wide pool: the size it was started
// with; before that, the size set by set_process_pool_threads, else the
// environment variable STRIDEWEAVE_NUM_THREADS, else the default
// (std::thread::hardware_concurrency() clamped to [1, 8]). Throws ValueError
// naming the variable when it is set but not an integer in [1, kMaxThreads].
int process_pool_threads();

// Sets the number of workers the process-wide pool starts with. Throws
// ValueError for n outside [1, kMaxThreads] and RuntimeError naming both sizes
// when the pool has already started with a different size.
void set_process_pool_threads(int n);

// STRIDEWEAVE_NUM_THREADS's value read as a pool size: nullopt for null,
// the integer when it is one in [1, kMaxThreads] (surrounding spaces
// allowed), ValueError naming the variable and the text otherwise.
std::optional<int> parse_num_threads(const char* text);

}  // namespace strideweave
