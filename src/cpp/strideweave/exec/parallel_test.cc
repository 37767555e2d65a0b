// parallel_for (exec/parallel.h): every iteration once, on the caller and the
// process-wide pool's workers, finishing whatever the workers are doing.
#include "strideweave/exec/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "strideweave/exec/thread_pool.h"
#include "strideweave/layout/layout.h"
#include "strideweave/layout/runs.h"

namespace strideweave {
namespace {

// The chunks one parallel_for called its body with, sorted.
std::vector<std::pair<int64_t, int64_t>> chunks_of(int64_t n, int64_t grain) {
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  parallel_for(n, grain, [&](int64_t begin, int64_t end) noexcept {
    std::lock_guard lock(mu);
    chunks.emplace_back(begin, end);
  });
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

TEST(ParallelFor, CoversEveryIterationOnceInChunksOfAtLeastTheGrain) {
  for (const int64_t grain : {int64_t{1}, int64_t{64}, int64_t{1000}, kParallelGrain}) {
    for (const int64_t n :
         {int64_t{1}, grain, 2 * grain - 1, 2 * grain, 7 * grain + 5, 100 * grain + 3}) {
      const auto chunks = chunks_of(n, grain);
      ASSERT_FALSE(chunks.empty());
      int64_t next = 0;
      for (std::size_t c = 0; c < chunks.size(); ++c) {
        const auto [begin, end] = chunks[c];
        EXPECT_EQ(begin, next) << "n " << n << " grain " << grain;
        EXPECT_EQ(begin % 64, 0) << "n " << n << " grain " << grain;
        if (c + 1 < chunks.size()) {
          EXPECT_GE(end - begin, grain) << "n " << n << " grain " << grain;
        }
        next = end;
      }
      EXPECT_EQ(next, n) << "n " << n << " grain " << grain;
      if (n < 2 * grain) {
        EXPECT_EQ(chunks.size(), 1U) << "a short loop stays one call";
      }
    }
  }
}

TEST(ParallelFor, WritesEveryElement) {
  const int64_t n = 10 * kParallelGrain + 17;
  std::vector<int64_t> out(static_cast<std::size_t>(n), -1);
  parallel_for(n, kParallelGrain, [&out](int64_t begin, int64_t end) noexcept {
    for (int64_t i = begin; i < end; ++i) out[static_cast<std::size_t>(i)] = 3 * i;
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], 3 * i) << i;
}

TEST(ParallelFor, EmptyLoopCallsNothing) {
  int calls = 0;
  parallel_for(0, 1, [&calls](int64_t, int64_t) noexcept { ++calls; });
  parallel_for(-5, 1, [&calls](int64_t, int64_t) noexcept { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelFor, FinishesOnTheCallerWhileEveryWorkerIsBusy) {
  // Every worker of the process-wide pool blocked until the loop is done:
  // the caller runs every chunk itself.
  ThreadPool& pool = process_pool();
  const int workers = pool.threads();
  std::atomic<int> started{0};
  std::atomic<bool> release{false};
  for (int w = 0; w < workers; ++w) {
    pool.submit([&] {
      ++started;
      while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  }
  while (started.load() < workers) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  std::atomic<int64_t> covered{0};
  parallel_for(64 * kParallelGrain, kParallelGrain, [&](int64_t begin, int64_t end) noexcept {
    if (std::this_thread::get_id() != caller) ++elsewhere;
    covered += end - begin;
  });
  EXPECT_EQ(covered.load(), 64 * kParallelGrain);
  EXPECT_EQ(elsewhere.load(), 0) << "no worker was free";
  release = true;
  pool.wait_idle();
}

TEST(ParallelFor, ManyCallersAtOnceAndFromPoolTasks) {
  // Eight threads, and eight pool tasks, each running loops of their own.
  const int64_t n = 4 * kParallelGrain + 100;
  std::atomic<int> wrong{0};
  const auto loops = [&] {
    for (int r = 0; r < 20; ++r) {
      std::vector<int32_t> out(static_cast<std::size_t>(n), 0);
      parallel_for(n, kParallelGrain, [&out](int64_t begin, int64_t end) noexcept {
        for (int64_t i = begin; i < end; ++i) out[static_cast<std::size_t>(i)] += 1;
      });
      if (std::count(out.begin(), out.end(), 1) != n) ++wrong;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back(loops);
  for (int t = 0; t < 8; ++t) process_pool().submit(loops);
  for (std::thread& t : threads) t.join();
  process_pool().wait_idle();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ParallelFor, UsesTheWorkersWhenTheyAreFree) {
  if (process_pool_threads() < 2) GTEST_SKIP() << "a pool of one thread runs loops on the caller";
  // Each chunk waits (bounded) until two threads have entered chunks: with a
  // free worker, a second thread joins the loop.
  std::atomic<int> inside{0};
  std::set<std::thread::id> threads;
  std::mutex mu;
  parallel_for(8 * kParallelGrain, kParallelGrain, [&](int64_t, int64_t) noexcept {
    {
      std::lock_guard lock(mu);
      threads.insert(std::this_thread::get_id());
    }
    ++inside;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (inside.load() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  });
  EXPECT_GE(threads.size(), 2U);
}

TEST(ParallelCopy, MemcpyOfEveryLengthAroundTheSplit) {
  // Below, at and above the split (2 * kParallelCopyGrain), with odd tails.
  for (const int64_t bytes : {int64_t{0}, int64_t{1}, 2 * kParallelCopyGrain - 1,
                              2 * kParallelCopyGrain, 5 * kParallelCopyGrain + 37}) {
    std::vector<std::byte> src(static_cast<std::size_t>(bytes));
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i * 7 + 3);
    std::vector<std::byte> dst(src.size() + 2, std::byte{0xEE});
    parallel_memcpy(dst.data() + 1, src.data(), src.size());
    EXPECT_EQ(dst.front(), std::byte{0xEE}) << bytes;
    EXPECT_EQ(dst.back(), std::byte{0xEE}) << bytes;
    EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin() + 1)) << bytes;
  }
}

TEST(ParallelCopy, StridedCopyAgreesWithTheSerialKernel) {
  // One contiguous run on both sides (one parallel_memcpy), two modes that
  // merge into one run at an offset, a transposed view (tiles in stretches
  // of its outer mode), a layout with holes and one whose outer mode has a
  // few long items (stretches of the outermost mode), and a destination
  // that is not injective (the serial kernel): the same bytes as
  // copy_strided.
  const int64_t n = 3 * kParallelCopyGrain / 4 + 11;  // Float32 items: above the split
  std::vector<float> src(static_cast<std::size_t>(2 * n + 8));
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) + 0.5F;
  const std::vector<std::pair<Layout, Layout>> cases = {
      {Layout(IntTuple(n)), Layout(IntTuple(n))},
      {Layout(IntTuple::tuple({4, n / 4}), IntTuple::tuple({1, 4})),
       Layout(IntTuple::tuple({4, n / 4}))},
      {Layout(IntTuple::tuple({512, 256}), IntTuple::tuple({256, 1})),
       Layout(IntTuple::tuple({512, 256}))},
      {Layout(IntTuple::tuple({3, n / 4}), IntTuple::tuple({1, 4})),
       Layout(IntTuple::tuple({3, n / 4}))},
      {Layout(IntTuple(n), IntTuple(2)), Layout(IntTuple(n))},
      {Layout(IntTuple::tuple({n / 3, 3}), IntTuple::tuple({1, n / 3 + 2})),
       Layout(IntTuple::tuple({n / 3, 3}), IntTuple::tuple({3, 1}))},
      {Layout(IntTuple::tuple({n / 2, 2})),
       Layout(IntTuple::tuple({n / 2, 2}), IntTuple::tuple({1, 1}))},
  };
  for (const auto& [from, to] : cases) {
    const auto bytes = static_cast<std::size_t>(to.cosize()) * sizeof(float);
    std::vector<std::byte> expected(bytes, std::byte{0});
    std::vector<std::byte> got(bytes, std::byte{0});
    const auto* source = reinterpret_cast<const std::byte*>(src.data());
    copy_strided(source, from, 5, expected.data(), to, 0, sizeof(float));
    parallel_copy_strided(source, from, 5, got.data(), to, 0, sizeof(float));
    EXPECT_EQ(got, expected) << from.to_string() << " -> " << to.to_string();
  }
}

}  // namespace
}  // namespace strideweave
