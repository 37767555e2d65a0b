#include "strideweave/exec/thread_pool.h"

#include <pthread.h>

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

ThreadPool::ThreadPool(int threads) {
  require_pool_size(threads, "ThreadPool: threads");
  workers_.reserve(static_cast<std::size_t>(threads));
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  task_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(task));
    ++unfinished_;
  }
  task_ready_.notify_one();
}

void ThreadPool::wait_idle() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return unfinished_ == 0; });
}

void ThreadPool::work() {
  std::unique_lock lock(mu_);
  for (;;) {
    task_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every task has been taken
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    task = nullptr;  // the task's captures go before it counts as finished
    lock.lock();
    if (--unfinished_ == 0) idle_.notify_all();
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
