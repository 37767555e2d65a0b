// parallel_for: one loop of independent iterations split across the calling
// thread and the process-wide pool's workers, where the loop is long enough
// for threads to pay (docs/threading.md, "Kernels on several threads").
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "strideweave/layout/layout.h"

namespace strideweave {

// Iterations below which a loop stays on the calling thread: waking a worker
// costs microseconds, about what this many elementwise iterations take.
inline constexpr int64_t kParallelGrain = int64_t{1} << 15;

// Calls body(begin, end) over consecutive chunks covering [0, n), each chunk
// of at least `grain` iterations (the last may be shorter), and returns when
// every chunk has run. With n < 2 * grain, or a pool of one thread, it is one
// call body(0, n) on the calling thread. Otherwise [0, n) is cut into one
// consecutive part per participant, the calling thread and up to
// process_pool().threads() - 1 workers: each starts on its own part (the
// caller on the first, a worker on one chosen by its worker number, so the
// same ranges go to the same threads on every call of the same length) and
// then takes the chunks left in the others'. The caller never waits for a
// worker to start, only for chunks a worker already took, so the loop
// finishes even when every worker is busy elsewhere (the caller then runs
// every chunk). Chunk boundaries are multiples of 64 iterations. `body` must
// not throw, and must be safe to call concurrently on disjoint chunks; it runs
// on the worker threads without any lock of the caller's held for it (the
// caller's own locks stay held by the caller).
void parallel_for_chunks(int64_t n, int64_t grain, void (*body)(void* context, int64_t, int64_t),
                         void* context);

template <class F>
void parallel_for(int64_t n, int64_t grain, F&& body) {
  using Body = std::remove_reference_t<F>;
  static_assert(std::is_nothrow_invocable_v<Body&, int64_t, int64_t>,
                "parallel_for: the body must be noexcept");
  parallel_for_chunks(
      n, grain,
      [](void* context, int64_t begin, int64_t end) { (*static_cast<Body*>(context))(begin, end); },
      const_cast<void*>(static_cast<const void*>(&body)));
}

// Bytes below which a copy stays on the calling thread: half the smallest
// copy parallel_memcpy splits (a chunk is at least this long).
inline constexpr int64_t kParallelCopyGrain = int64_t{256} << 10;

// std::memcpy(dst, src, bytes), split by parallel_for into chunks of at least
// kParallelCopyGrain bytes: a copy of 512 KiB or more runs on the caller and
// the pool's free workers. On the 2-core development machine two threads
// copy 64 MiB in 3.7-3.9 ms against 5.1-5.4 ms for one (NumPy's copyto both
// ways). The ranges must not overlap.
void parallel_memcpy(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept;

// copy_strided (layout/runs.h), split by parallel_for when it moves 512 KiB or
// more: a copy that is one contiguous run on both sides (the joint walk of
// the two layouts is one mode of stride 1) is one parallel_memcpy; any other
// is split into stretches of its outermost joint mode, each at least
// kParallelCopyGrain bytes, when its destination side writes every item once
// (internal_runs::writes_each_item_once); otherwise it runs on the calling
// thread. Throws what copy_strided throws.
void parallel_copy_strided(const std::byte* src, const Layout& src_layout, int64_t src_offset,
                           std::byte* dst, const Layout& dst_layout, int64_t dst_offset,
                           std::size_t itemsize);

}  // namespace strideweave
