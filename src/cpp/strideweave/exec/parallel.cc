#include "strideweave/exec/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "strideweave/exec/thread_pool.h"
#include "strideweave/layout/runs.h"

namespace strideweave {

namespace {

// One parallel_for: shared by the caller and the pool tasks it submitted, and
// kept alive by them, so a task that starts after the caller returned finds
// no chunk left and touches nothing of the caller's.
//
// The iterations are cut into `parts` consecutive parts, one per participant
// (part 0 is the caller's), and each part into a few chunks. A participant
// runs the chunks of its own part in order, then takes the chunks left in the
// others'. A loop of the same length splits the same way on every call, and a
// worker starts on the same part every time (by its worker number), so in a
// chain of elementwise operations each thread reads the part of the previous
// result that it wrote itself, from its own core's cache. On the 2-core
// development machine, two threads multiplying 1e6 Float32 took 90-125 us
// per call when each kept its half, and 430-460 us when the halves changed
// threads on every call.
struct Loop {
  int64_t n = 0;
  int64_t chunk = 0;        // iterations per chunk (a multiple of 64)
  int64_t chunks = 0;       // ceil(n / chunk)
  int64_t parts = 0;        // the participants, at least 2
  int64_t part_chunks = 0;  // chunks per part (the last parts may have fewer)
  void (*body)(void*, int64_t, int64_t) = nullptr;
  void* context = nullptr;
  // Per part, the next of its chunks to take, each on a cache line of its
  // own so that the participants' counters do not contend.
  struct alignas(64) Next {
    std::atomic<int64_t> chunk{0};
  };
  std::unique_ptr<Next[]> next;
  std::atomic<int64_t> done{0};  // chunks finished
  // The caller, once it spun for longer than a chunk should take, sleeps on
  // all_done; the thread finishing the last chunk notifies it under mu.
  std::mutex mu;
  std::condition_variable all_done;

  // Takes and runs chunks until none is left: part `first`'s, then the
  // following parts' in turn.
  void run_chunks(int64_t first) noexcept {
    int64_t finished = 0;
    for (int64_t k = 0; k < parts; ++k) {
      const int64_t part = (first + k) % parts;
      const int64_t part_begin = part * part_chunks;
      const int64_t part_end = std::min(chunks, part_begin + part_chunks);
      std::atomic<int64_t>& taken = next[part].chunk;
      for (int64_t c = part_begin + taken.fetch_add(1, std::memory_order_relaxed); c < part_end;
           c = part_begin + taken.fetch_add(1, std::memory_order_relaxed)) {
        const int64_t begin = c * chunk;
        body(context, begin, std::min(n, begin + chunk));
        ++finished;
      }
    }
    if (finished == 0 || done.fetch_add(finished, std::memory_order_acq_rel) + finished < chunks) {
      return;
    }
    std::lock_guard lock(mu);
    all_done.notify_all();
  }

  bool finished() const noexcept { return done.load(std::memory_order_acquire) == chunks; }
};

// The part a pool worker starts on: one of parts 1 to parts - 1, the same for
// the same worker on every call (part 1 for a thread that is not a worker).
int64_t workers_part(int64_t parts) noexcept {
  const int64_t worker = ThreadPool::worker_number();
  return 1 + (worker < 0 ? 0 : worker % (parts - 1));
}

}  // namespace

void parallel_for_chunks(int64_t n, int64_t grain, void (*body)(void*, int64_t, int64_t),
                         void* context) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int threads = n < 2 * grain ? 1 : process_pool_threads();
  // One loop at a time takes the workers: with several threads running loops
  // at once the cores are busy already, and splitting every loop would only
  // add the hand-offs (8 threads moving 1 MiB each lost a tenth of their
  // throughput to them). The others run on their callers.
  static std::atomic<int> active{0};
  if (threads <= 1 || active.fetch_add(1, std::memory_order_acq_rel) != 0) {
    if (threads > 1) active.fetch_sub(1, std::memory_order_acq_rel);
    body(context, 0, n);
    return;
  }
  struct Leave {
    ~Leave() { active.fetch_sub(1, std::memory_order_acq_rel); }
  } leave;
  // Up to `threads` participants; a few chunks each, so that one that starts
  // late (a busy worker, a descheduled caller) leaves its share to the others.
  const int64_t participants = std::min<int64_t>(threads, n / grain);
  const int64_t target_chunks = std::min<int64_t>(participants * 4, n / grain);
  auto loop = std::make_shared<Loop>();
  loop->n = n;
  loop->chunk = (n + target_chunks - 1) / target_chunks;
  loop->chunk = (loop->chunk + 63) / 64 * 64;
  loop->chunks = (n + loop->chunk - 1) / loop->chunk;
  loop->parts = participants;
  loop->part_chunks = (loop->chunks + participants - 1) / participants;
  loop->next = std::make_unique<Loop::Next[]>(static_cast<std::size_t>(participants));
  loop->body = body;
  loop->context = context;
  ThreadPool& pool = process_pool();
  for (int64_t i = 1; i < participants; ++i) {
    pool.submit([loop] { loop->run_chunks(workers_part(loop->parts)); });
  }
  loop->run_chunks(0);
  // The chunks left are running on workers: spin for them a while, as a
  // futex sleep and wake costs about what a chunk takes.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
  for (int i = 1; !loop->finished(); ++i) {
    cpu_relax();
    if (i % 64 != 0) continue;
    std::this_thread::yield();  // another runnable thread (more threads than cores) gets the core
    if (std::chrono::steady_clock::now() >= deadline) {
      std::unique_lock lock(loop->mu);
      loop->all_done.wait(lock, [&] { return loop->finished(); });
    }
  }
}

void parallel_memcpy(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept {
  parallel_for(static_cast<int64_t>(bytes), kParallelCopyGrain,
               [dst, src](int64_t begin, int64_t end) noexcept {
                 std::memcpy(dst + begin, src + begin, static_cast<std::size_t>(end - begin));
               });
}

namespace {

// The items of a copy between `src` and `dst` when both have the same leaf
// extents and each walks its items at consecutive indices from its offset
// (every leaf mode of extent above 1 has the product of the extents before it
// as its stride): one contiguous run on both sides, which the joint walk
// would find too, found without building it (a small move's copy). 0 for any
// other copy, and for an empty one.
int64_t one_run_items(const Layout& src, const Layout& dst) noexcept {
  const std::vector<LeafMode>& a = src.leaf_modes();
  const std::vector<LeafMode>& b = dst.leaf_modes();
  if (a.size() != b.size()) return 0;
  int64_t items = 1;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k].extent != b[k].extent) return 0;
    if (a[k].extent == 1) continue;
    if (a[k].stride != items || b[k].stride != items) return 0;
    items *= a[k].extent;
  }
  return items;
}

}  // namespace

void parallel_copy_strided(const std::byte* src, const Layout& src_layout, int64_t src_offset,
                           std::byte* dst, const Layout& dst_layout, int64_t dst_offset,
                           std::size_t itemsize) {
  using internal_runs::JointMode;
  const auto size = static_cast<int64_t>(itemsize);
  if (const int64_t items = one_run_items(src_layout, dst_layout); items > 0) {
    parallel_memcpy(dst + dst_offset * size, src + src_offset * size,
                    static_cast<std::size_t>(items * size));
    return;
  }
  bool empty = false;
  const std::vector<JointMode> modes = internal_runs::joint_modes(src_layout, dst_layout, empty);
  if (empty) return;
  if (modes.size() == 1 && modes[0].src_stride == 1 && modes[0].dst_stride == 1) {
    parallel_memcpy(dst + dst_offset * size, src + src_offset * size,
                    static_cast<std::size_t>(modes[0].extent * size));
    return;
  }
  int64_t items = 1;
  for (const JointMode& m : modes) items *= m.extent;
  // Threads copy disjoint stretches of the outermost mode, so every
  // destination item must be written by one of them only.
  if (modes.empty() || items * size < 2 * kParallelCopyGrain ||
      !internal_runs::writes_each_item_once(modes)) {
    internal_runs::copy_joint(src, src_offset, dst, dst_offset, modes, itemsize);
    return;
  }
  const JointMode outer = modes.back();
  const int64_t inner_bytes = items / outer.extent * size;
  std::exception_ptr failure;  // the first chunk's (an allocation of the walk)
  std::atomic_flag failed;
  parallel_for(outer.extent, std::max<int64_t>(1, kParallelCopyGrain / inner_bytes),
               [&](int64_t begin, int64_t end) noexcept {
                 try {
                   std::vector<JointMode> part = modes;
                   part.back().extent = end - begin;
                   internal_runs::copy_joint(src, src_offset + begin * outer.src_stride, dst,
                                             dst_offset + begin * outer.dst_stride, part, itemsize);
                 } catch (...) {
                   if (!failed.test_and_set()) failure = std::current_exception();
                 }
               });
  if (failure) std::rethrow_exception(failure);
}

}  // namespace strideweave
