#include "strideweave/exec/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "strideweave/exec/thread_pool.h"

namespace strideweave {

namespace {

// One parallel_for: shared by the caller and the pool tasks it submitted, and
// kept alive by them, so a task that starts after the caller returned finds
// no chunk left and touches nothing of the caller's.
struct Loop {
  int64_t n = 0;
  int64_t chunk = 0;   // iterations per chunk (a multiple of 64)
  int64_t chunks = 0;  // ceil(n / chunk)
  void (*body)(void*, int64_t, int64_t) = nullptr;
  void* context = nullptr;
  std::atomic<int64_t> next{0};  // the next chunk to take
  std::atomic<int64_t> done{0};  // chunks finished
  // The caller, once it spun for longer than a chunk should take, sleeps on
  // all_done; the thread finishing the last chunk notifies it under mu.
  std::mutex mu;
  std::condition_variable all_done;

  // Takes and runs chunks until none is left.
  void run_chunks() noexcept {
    int64_t finished = 0;
    for (int64_t c = next.fetch_add(1, std::memory_order_relaxed); c < chunks;
         c = next.fetch_add(1, std::memory_order_relaxed)) {
      const int64_t begin = c * chunk;
      body(context, begin, std::min(n, begin + chunk));
      ++finished;
    }
    if (finished == 0 || done.fetch_add(finished, std::memory_order_acq_rel) + finished < chunks) {
      return;
    }
    std::lock_guard lock(mu);
    all_done.notify_all();
  }

  bool finished() const noexcept { return done.load(std::memory_order_acquire) == chunks; }
};

}  // namespace

void parallel_for_chunks(int64_t n, int64_t grain, void (*body)(void*, int64_t, int64_t),
                         void* context) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int threads = n < 2 * grain ? 1 : process_pool_threads();
  if (threads <= 1) {
    body(context, 0, n);
    return;
  }
  // Up to `threads` participants; a few chunks each, so that one that starts
  // late (a busy worker, a descheduled caller) leaves its share to the others.
  const int64_t participants = std::min<int64_t>(threads, n / grain);
  const int64_t target_chunks = std::min<int64_t>(participants * 4, n / grain);
  auto loop = std::make_shared<Loop>();
  loop->n = n;
  loop->chunk = (n + target_chunks - 1) / target_chunks;
  loop->chunk = (loop->chunk + 63) / 64 * 64;
  loop->chunks = (n + loop->chunk - 1) / loop->chunk;
  loop->body = body;
  loop->context = context;
  ThreadPool& pool = process_pool();
  for (int64_t i = 1; i < participants; ++i) pool.submit([loop] { loop->run_chunks(); });
  loop->run_chunks();
  // The chunks left are running on workers: spin for them a while, as a
  // futex sleep and wake costs about what a chunk takes.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
  for (int i = 1; !loop->finished(); ++i) {
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline) {
      std::unique_lock lock(loop->mu);
      loop->all_done.wait(lock, [&] { return loop->finished(); });
    }
  }
}

}  // namespace strideweave
