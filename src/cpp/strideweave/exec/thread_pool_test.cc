// ThreadPool and the process-wide pool (docs/threading.md).
#include "strideweave/exec/thread_pool.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

TEST(ThreadPool, RunsEveryTaskAndWaitsUntilIdle) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.threads(), 3);
  std::atomic<int> sum{0};
  for (int i = 1; i <= 100; ++i) pool.submit([&sum, i] { sum += i; });
  pool.wait_idle();
  EXPECT_EQ(sum.load(), 5050);
}

TEST(ThreadPool, RefusesASizeOutsideItsRange) {
  for (int n : {0, -1, ThreadPool::kMaxThreads + 1}) {
    const std::string m = message_of<ValueError>([n] { ThreadPool pool(n); });
    EXPECT_NE(m.find(std::to_string(n)), std::string::npos) << m;
  }
}

TEST(ThreadPool, RunsTasksConcurrently) {
  // Two tasks that each wait for the other finish only on two workers at once.
  ThreadPool pool(2);
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::atomic<int> met{0};
  const auto rendezvous = [&] {
    std::unique_lock lock(mu);
    ++arrived;
    cv.notify_all();
    if (cv.wait_for(lock, std::chrono::seconds(30), [&] { return arrived == 2; })) ++met;
  };
  pool.submit(rendezvous);
  pool.submit(rendezvous);
  pool.wait_idle();
  EXPECT_EQ(met.load(), 2);
}

TEST(ThreadPool, EachWorkerKeepsItsOwnNumber) {
  // Three tasks that wait for each other run on the three workers at once;
  // each worker reports the same number in both rounds, and the numbers of
  // the workers the pool started with are 0 to threads() - 1.
  EXPECT_EQ(ThreadPool::worker_number(), -1);
  ThreadPool pool(3);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<std::thread::id, int64_t>> seen;
  for (int round = 1; round <= 2; ++round) {
    for (int t = 0; t < 3; ++t) {
      pool.submit([&, round] {
        std::unique_lock lock(mu);
        seen.emplace_back(std::this_thread::get_id(), ThreadPool::worker_number());
        cv.notify_all();
        cv.wait_for(lock, std::chrono::seconds(30),
                    [&] { return seen.size() >= static_cast<std::size_t>(3 * round); });
      });
    }
    pool.wait_idle();
  }
  ASSERT_EQ(seen.size(), 6U);
  std::vector<int64_t> first_round;
  for (std::size_t i = 0; i < 3; ++i) first_round.push_back(seen[i].second);
  std::sort(first_round.begin(), first_round.end());
  EXPECT_EQ(first_round, (std::vector<int64_t>{0, 1, 2}));
  for (std::size_t i = 3; i < 6; ++i) {
    const auto same_thread = std::find_if(seen.begin(), seen.begin() + 3,
                                          [&](const auto& s) { return s.first == seen[i].first; });
    ASSERT_NE(same_thread, seen.begin() + 3);
    EXPECT_EQ(same_thread->second, seen[i].second);
  }
}

TEST(ThreadPool, DestructionRunsEveryQueuedTask) {
  std::atomic<int> ran{0};
  {
    ThreadPool pool(1);
    for (int i = 0; i < 50; ++i) {
      pool.submit([&ran] {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        ++ran;
      });
    }
  }
  EXPECT_EQ(ran.load(), 50);
}

TEST(ThreadPool, WaitIdleWaitsForTasksSubmittedByTasks) {
  ThreadPool pool(2);
  std::atomic<int> leaves{0};
  for (int i = 0; i < 10; ++i) {
    pool.submit([&] {
      for (int j = 0; j < 10; ++j) pool.submit([&leaves] { ++leaves; });
    });
  }
  pool.wait_idle();
  EXPECT_EQ(leaves.load(), 100);
}

TEST(ThreadPool, ManySubmittersOneIdleWait) {
  ThreadPool pool(4);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> submitters;
  for (int t = 0; t < 4; ++t) {
    submitters.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) pool.submit([&total] { ++total; });
    });
  }
  for (std::thread& s : submitters) s.join();
  pool.wait_idle();
  EXPECT_EQ(total.load(), 4000);
}

// A one-shot signal a test waits for with a deadline, so that a pool that
// fails to run the signalling task fails the test instead of hanging it.
class Latch {
 public:
  // Notifies under the lock: a waiter may destroy the latch as soon as it sees
  // it open, so open() must not touch it after releasing the lock.
  void open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(ThreadPool, ATaskBlockedInARegionNeverStopsTheTasksQueuedAfterIt) {
  // One worker: the first task blocks until the second has run. Without the
  // region's extra worker, the second task never starts.
  ThreadPool pool(1);
  Latch second_ran;
  std::atomic<bool> first_saw_it{false};
  pool.submit([&] {
    const ThreadPool::BlockingRegion blocking;
    first_saw_it = second_ran.wait();
  });
  pool.submit([&] { second_ran.open(); });
  pool.wait_idle();
  EXPECT_TRUE(first_saw_it.load());
}

// A task that, inside a region, submits the next level and waits for it:
// a hook that starts a move and waits for it, nested `depth` times.
void nest(ThreadPool& pool, int depth, std::atomic<int>& deepest, std::atomic<int>& failures) {
  const ThreadPool::BlockingRegion blocking;
  deepest = std::max(deepest.load(), depth);
  if (depth == 0) return;
  Latch child_done;
  pool.submit([&pool, depth, &deepest, &failures, &child_done] {
    nest(pool, depth - 1, deepest, failures);
    child_done.open();
  });
  if (!child_done.wait()) ++failures;
}

TEST(ThreadPool, TasksWaitingOnTasksInRegionsCompleteAtAnyDepth) {
  for (const int size : {1, 2}) {
    ThreadPool pool(size);
    std::atomic<int> deepest{0};
    std::atomic<int> failures{0};
    pool.submit([&] { nest(pool, 40, deepest, failures); });
    pool.wait_idle();
    EXPECT_EQ(deepest.load(), 40) << size;
    EXPECT_EQ(failures.load(), 0) << size;
  }
}

TEST(ThreadPool, ExtraWorkersEndOnceTheRegionsEnd) {
  ThreadPool pool(2);
  std::atomic<int> deepest{0};
  std::atomic<int> failures{0};
  pool.submit([&] { nest(pool, 10, deepest, failures); });
  pool.wait_idle();
  ASSERT_EQ(failures.load(), 0);
  // An idle surplus worker ends when it next looks for work: wake them all by
  // running more tasks than workers, then wait (bounded) for the count to settle.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (pool.live_threads() > pool.threads() && std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 64; ++i) pool.submit([] {});
    pool.wait_idle();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(pool.live_threads(), pool.threads());
}

TEST(ThreadPool, ARegionOffTheWorkersStartsNoWorker) {
  ThreadPool pool(2);
  {
    const ThreadPool::BlockingRegion blocking;  // on the test's thread
    const ThreadPool::BlockingRegion nested;
    Latch ran;
    pool.submit([&ran] { ran.open(); });
    EXPECT_TRUE(ran.wait());
    EXPECT_EQ(pool.live_threads(), 2);
  }
  pool.wait_idle();
  EXPECT_EQ(pool.live_threads(), 2);
}

TEST(ThreadPool, ParsesTheThreadCountVariable) {
  EXPECT_EQ(parse_num_threads(nullptr), std::nullopt);
  EXPECT_EQ(parse_num_threads("4"), 4);
  EXPECT_EQ(parse_num_threads(" 12 "), 12);
  EXPECT_EQ(parse_num_threads("1024"), 1024);
  for (const char* bad : {"", "0", "-3", "1025", "four", "2x", "99999999999999999999999"}) {
    const std::string m = message_of<ValueError>([bad] { parse_num_threads(bad); });
    EXPECT_NE(m.find("STRIDEWEAVE_NUM_THREADS"), std::string::npos) << m;
    EXPECT_NE(m.find(std::string("'") + bad + "'"), std::string::npos) << m;
  }
}

// The only test that starts the process-wide pool.
// The process pool is started at most once per process, so this check runs in
// a fresh process (a threadsafe death test re-executes the binary) whatever
// other tests started before it. Returns 0 when everything held, else the
// number of the failed check.
int process_pool_starts_once_with_the_requested_size() {
  set_process_pool_threads(3);
  if (process_pool_threads() != 3) return 10;
  ThreadPool& pool = process_pool();
  if (&pool != &process_pool() || pool.threads() != 3) return 11;
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) pool.submit([&ran] { ++ran; });
  pool.wait_idle();
  if (ran.load() != 10) return 12;
  set_process_pool_threads(3);  // the size it has: accepted
  try {
    set_process_pool_threads(5);
    return 13;
  } catch (const RuntimeError& e) {
    if (std::string(e.what()).find("started with 3 threads") == std::string::npos) return 14;
  }
  if (process_pool_threads() != 3) return 15;
  try {
    set_process_pool_threads(0);
    return 16;
  } catch (const ValueError&) {
  }
// Neither sanitizer runtime makes fork() of a multi-threaded process safe (gcc 12's
// ASan allocator lock may be held by a worker at the fork): the cpp env checks it.
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
  // A fork child has none of the parent's workers: it starts its own pool.
  const pid_t child = fork();
  if (child < 0) return 17;
  if (child == 0) {
    alarm(30);  // a hang fails the parent's check instead of the run
    std::atomic<int> in_child{0};
    process_pool().submit([&in_child] { ++in_child; });
    process_pool().wait_idle();
    _exit(in_child.load() == 1 && process_pool().threads() == 3 ? 0 : 1);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 18;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 19;
#endif
  return 0;
}

TEST(ThreadPool, TheProcessPoolStartsOnceWithTheRequestedSize) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(process_pool_starts_once_with_the_requested_size()),
              ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace strideweave

namespace strideweave {
namespace {

TEST(ThreadPool, TasksQueuedWhileWorkersSpinAllRun) {
  // Right after a task, idle workers spin for the next one while the others
  // sleep: a burst of tasks that all wait for each other must still get a
  // worker each (a task beyond the spinning workers wakes a sleeping one).
  ThreadPool pool(3);
  for (int round = 0; round < 200; ++round) {
    pool.submit([] {});
    pool.wait_idle();  // the workers now spin, then sleep
    std::mutex mu;
    std::condition_variable cv;
    int arrived = 0;
    std::atomic<int> met{0};
    for (int t = 0; t < 3; ++t) {
      pool.submit([&] {
        std::unique_lock lock(mu);
        ++arrived;
        cv.notify_all();
        if (cv.wait_for(lock, std::chrono::seconds(20), [&] { return arrived == 3; })) ++met;
      });
    }
    pool.wait_idle();
    ASSERT_EQ(met.load(), 3) << "round " << round;
  }
}

}  // namespace
}  // namespace strideweave
