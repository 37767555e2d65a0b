// ThreadPool: worker threads for the work a movement runs off the caller's
// thread (providers' I/O, Python _copy hooks), kept ready while workers block
// in a caller's code, and the one process-wide pool (docs/threading.md).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace strideweave {

// A set of worker threads running submitted tasks in submission order (the
// first free worker takes the oldest task). The pool's own lock is never held
// while a task runs, so a task may submit further tasks.
//
// The pool keeps threads() workers ready for its queue, however many of its
// workers are blocked in a caller's code. A task that runs code it does not
// control (a caller's hook: code that may block, wait on other pool tasks or
// start further moves) marks it with a BlockingRegion. While a worker is
// inside one, the pool does not count it: when a task is queued and no
// counted worker is free, the pool starts an extra worker, so a region that
// waits on the pool's own work (a hook that moves, at any nesting depth) or
// blocks forever (a hook that never returns) never stops other tasks from
// running. Extra workers end when they find nothing to do while the pool has
// more counted workers than threads(). The pool holds at most kMaxThreads
// workers; at that bound a queued task waits for a worker to be free.
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

  // The number of workers the pool keeps ready: the size it was made with.
  int threads() const noexcept { return size_; }

  // The workers alive now: threads() plus the extra workers started while
  // workers were inside BlockingRegions (and not yet ended).
  int live_threads() const;

  static constexpr int kMaxThreads = 1024;

  // The calling thread's worker number in the pool it works for: 0 to
  // threads() - 1 for the workers the pool started with, higher for extra
  // ones; -1 on a thread that is no pool's worker. Stable for the worker's
  // lifetime, so work split the same way each time can go to the same
  // threads (parallel_for: each keeps its part of the data in its cache).
  static int64_t worker_number() noexcept;

  // Marks the calling thread, for its lifetime, as running code that may
  // block: on a worker of any ThreadPool, that pool stops counting the worker
  // until the region ends (see the class comment). Nests; does nothing on a
  // thread that is not a pool worker. Never throws: when no extra worker can
  // be started (the bound, or the system refuses a thread), queued tasks wait
  // for a free worker.
  class BlockingRegion {
   public:
    BlockingRegion() noexcept;
    ~BlockingRegion();
    BlockingRegion(const BlockingRegion&) = delete;
    BlockingRegion& operator=(const BlockingRegion&) = delete;

   private:
    ThreadPool* pool_;  // the pool whose worker entered the outermost region, else null
  };

 private:
  void work(int64_t id);
  // Starts one worker unless the bound or the system forbids it. Requires mu_.
  void start_worker_locked() noexcept;
  // Starts a worker when more tasks are queued than workers spin for one and
  // no counted worker is free.
  // Requires mu_.
  void keep_ready_locked() noexcept;
  // Spins up to kSpin for a queued task, with mu_ released meanwhile; true
  // when one was queued. `lock` holds mu_ on entry and on return.
  bool spin_for_task(std::unique_lock<std::mutex>& lock);
  // Joins the workers that ended. Requires mu_.
  void join_ended_locked();

  const int size_;
  mutable std::mutex mu_;
  std::condition_variable task_ready_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> queue_;
  int64_t unfinished_ = 0;  // queued plus running tasks
  bool stopping_ = false;
  int live_ = 0;      // workers started and not ended
  int waiting_ = 0;   // workers waiting for a task on task_ready_
  int spinning_ = 0;  // workers spinning for a task (spin_for_task)
  // queue_.size(), readable without mu_ by spinning workers.
  std::atomic<int64_t> queued_{0};
  // How long an idle worker spins before it waits on task_ready_.
  static constexpr std::chrono::microseconds kSpin{50};
  int blocked_ = 0;  // workers inside a BlockingRegion
  int64_t next_id_ = 0;
  std::map<int64_t, std::thread> workers_;
  std::vector<int64_t> ended_;  // ended extra workers, to join
};

// A hint to the core that the calling thread spins waiting for another (x86's
// pause: the sibling hyperthread runs meanwhile, and leaving the loop costs no
// pipeline flush).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

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
