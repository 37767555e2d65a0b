#include "strideweave/exec/thread_pool.h"

#include <pthread.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "strideweave/util/env.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

void require_pool_size(int64_t n, const std::string& what) {
  if (n < 1 || n > ThreadPool::kMaxThreads) {
    throw ValueError(what + " " + std::to_string(n) + " is not a thread count from 1 to " +
                     std::to_string(ThreadPool::kMaxThreads));
  }
}

// The process-wide pool's state. Never destroyed (see process_pool()).
struct ProcessPool {
  std::mutex mu;
  ThreadPool* pool = nullptr;  // leaked on purpose: never joined, never destroyed
  std::optional<int> requested;
};

// The state of this process's pool; a fork child replaces it (see below).
ProcessPool*& process_state_slot() {
  static ProcessPool* state = new ProcessPool();
  return state;
}

ProcessPool& process_state() { return *process_state_slot(); }

// After fork() the child has none of the parent's workers, and the parent's
// locks may be held by threads that do not exist there: the child (single
// threaded here) leaks the parent's state and starts its own pool on first
// use, keeping the requested size.
void forget_pool_in_child() {
  ProcessPool*& slot = process_state_slot();
  auto* fresh = new ProcessPool();
  fresh->requested = slot->requested;
  slot = fresh;
}

int default_threads() {
  const unsigned hardware = std::thread::hardware_concurrency();
  return static_cast<int>(hardware == 0 ? 1 : (hardware > 8 ? 8 : hardware));
}

int requested_threads_locked(const ProcessPool& state) {
  if (state.requested) return *state.requested;
  if (const std::optional<int> n = parse_num_threads(std::getenv("STRIDEWEAVE_NUM_THREADS"))) {
    return *n;
  }
  return default_threads();
}

}  // namespace

namespace {

// The pool whose worker the calling thread is (null elsewhere), and the depth
// of the BlockingRegions the thread is inside.
thread_local ThreadPool* current_pool = nullptr;
thread_local int region_depth = 0;
thread_local int64_t current_worker = -1;

}  // namespace

ThreadPool::ThreadPool(int threads) : size_(threads) {
  require_pool_size(threads, "ThreadPool: threads");
  std::lock_guard lock(mu_);
  for (int i = 0; i < threads; ++i) {
    const int64_t id = next_id_++;
    workers_.emplace(id, std::thread([this, id] { work(id); }));
    ++live_;
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  task_ready_.notify_all();
  // A task still running may start a worker meanwhile: join until none is left.
  for (;;) {
    std::thread worker;
    {
      std::lock_guard lock(mu_);
      if (workers_.empty()) return;
      worker = std::move(workers_.begin()->second);
      workers_.erase(workers_.begin());
    }
    worker.join();
  }
}

void ThreadPool::submit(std::function<void()> task) {
  std::lock_guard lock(mu_);
  queue_.push_back(std::move(task));
  queued_.store(static_cast<int64_t>(queue_.size()), std::memory_order_release);
  ++unfinished_;
  // Each spinning worker takes one queued task; a task beyond them wakes a
  // waiting worker, or starts one.
  if (queue_.size() <= static_cast<std::size_t>(spinning_)) return;
  if (waiting_ > 0) {
    task_ready_.notify_one();
  } else {
    keep_ready_locked();
  }
}

void ThreadPool::wait_idle() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return unfinished_ == 0; });
}

int ThreadPool::live_threads() const {
  std::lock_guard lock(mu_);
  return live_;
}

void ThreadPool::keep_ready_locked() noexcept {
  if (queue_.size() > static_cast<std::size_t>(spinning_) && waiting_ == 0 &&
      live_ - blocked_ < size_) {
    start_worker_locked();
  }
}

void ThreadPool::start_worker_locked() noexcept {
  join_ended_locked();
  if (live_ >= kMaxThreads) return;
  const int64_t id = next_id_;
  try {
    workers_.emplace(id, std::thread([this, id] { work(id); }));
  } catch (...) {  // the system refused a thread: queued tasks wait for a free worker
    return;
  }
  ++next_id_;
  ++live_;
}

void ThreadPool::join_ended_locked() {
  // An ended worker released mu_ as its last step, so joining it under mu_
  // waits only for its thread to finish returning.
  for (const int64_t id : ended_) {
    const auto found = workers_.find(id);
    if (found == workers_.end()) continue;  // the destructor joined it
    found->second.join();
    workers_.erase(found);
  }
  ended_.clear();
}

int64_t ThreadPool::worker_number() noexcept { return current_worker; }

void ThreadPool::work(int64_t id) {
  current_pool = this;
  current_worker = id;
  std::unique_lock lock(mu_);
  for (;;) {
    if (queue_.empty()) {
      // More counted workers than the pool keeps ready: a worker that left its
      // BlockingRegion made an extra one surplus, and this one ends.
      const bool surplus = live_ - blocked_ > size_;
      if (stopping_ || surplus) {
        if (!stopping_) ended_.push_back(id);
        --live_;
        return;
      }
      // Spin a while before sleeping: a worker woken from a futex takes
      // microseconds to run, as long as a short kernel chunk (parallel_for)
      // takes, and a burst of such tasks (a chain of operations) arrives
      // microseconds apart.
      if (spin_for_task(lock)) continue;
      ++waiting_;
      task_ready_.wait(lock,
                       [this] { return stopping_ || !queue_.empty() || live_ - blocked_ > size_; });
      --waiting_;
      continue;
    }
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    queued_.store(static_cast<int64_t>(queue_.size()), std::memory_order_relaxed);
    lock.unlock();
    task();
    task = nullptr;  // the task's captures go before it counts as finished
    lock.lock();
    if (--unfinished_ == 0) idle_.notify_all();
  }
}

bool ThreadPool::spin_for_task(std::unique_lock<std::mutex>& lock) {
  ++spinning_;
  lock.unlock();
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  bool found = false;
  for (int i = 1;; ++i) {
    if (queued_.load(std::memory_order_acquire) > 0) {
      found = true;
      break;
    }
    cpu_relax();
    if (i % 64 == 0) {
      if (std::chrono::steady_clock::now() >= deadline) break;
      // Another runnable thread (more threads than cores) gets the core.
      std::this_thread::yield();
    }
  }
  lock.lock();
  --spinning_;
  return found;
}

ThreadPool::BlockingRegion::BlockingRegion() noexcept
    : pool_(region_depth++ == 0 ? current_pool : nullptr) {
  if (pool_ == nullptr) return;
  std::lock_guard lock(pool_->mu_);
  ++pool_->blocked_;
  pool_->keep_ready_locked();
}

ThreadPool::BlockingRegion::~BlockingRegion() {
  --region_depth;
  if (pool_ == nullptr) return;
  std::lock_guard lock(pool_->mu_);
  --pool_->blocked_;
  // An idle worker may now be surplus: let one look.
  if (pool_->waiting_ > 0 && pool_->live_ - pool_->blocked_ > pool_->size_) {
    pool_->task_ready_.notify_one();
  }
}

ThreadPool& process_pool() {
  static const int registered = pthread_atfork(nullptr, nullptr, &forget_pool_in_child);
  static_cast<void>(registered);
  ProcessPool& state = process_state();
  std::lock_guard lock(state.mu);
  if (state.pool == nullptr) state.pool = new ThreadPool(requested_threads_locked(state));
  return *state.pool;
}

int process_pool_threads() {
  ProcessPool& state = process_state();
  std::lock_guard lock(state.mu);
  return state.pool != nullptr ? state.pool->threads() : requested_threads_locked(state);
}

void set_process_pool_threads(int n) {
  require_pool_size(n, "set_process_pool_threads: n");
  ProcessPool& state = process_state();
  std::lock_guard lock(state.mu);
  if (state.pool != nullptr && state.pool->threads() != n) {
    throw RuntimeError("set_process_pool_threads: the process-wide pool has already started with " +
                       std::to_string(state.pool->threads()) + " threads; cannot change to " +
                       std::to_string(n));
  }
  state.requested = n;
}

std::optional<int> parse_num_threads(const char* text) {
  if (text == nullptr) return std::nullopt;
  const std::optional<uint64_t> n =
      parse_bounded_integer(text, {.max = ThreadPool::kMaxThreads, .trailing_blanks = true});
  if (!n || *n < 1) {
    throw ValueError("STRIDEWEAVE_NUM_THREADS='" + std::string(text) +
                     "' is not a thread count from 1 to " +
                     std::to_string(ThreadPool::kMaxThreads));
  }
  return static_cast<int>(*n);
}

}  // namespace strideweave
