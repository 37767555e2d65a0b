// CoreMutex's per-thread count of held core locks, and the fork gate (docs/threading.md).
#include "strideweave/exec/core_mutex.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/slot_access.h"

namespace strideweave {
namespace {

TEST(CoreMutex, CountsLocksHeldByThisThreadOnly) {
  CoreMutex a;
  CoreMutex b;
  EXPECT_EQ(core_locks_held(), 0);
  {
    std::scoped_lock both(a, b);
    EXPECT_EQ(core_locks_held(), 2);
    int seen_elsewhere = -1;
    bool locked_elsewhere = true;
    std::thread([&] {
      seen_elsewhere = core_locks_held();
      locked_elsewhere = a.try_lock();
      seen_elsewhere += core_locks_held();
    }).join();
    EXPECT_EQ(seen_elsewhere, 0);
    EXPECT_FALSE(locked_elsewhere);
  }
  EXPECT_EQ(core_locks_held(), 0);
  {
    std::unique_lock one(a, std::try_to_lock);
    ASSERT_TRUE(one.owns_lock());
    EXPECT_EQ(core_locks_held(), 1);
  }
  EXPECT_EQ(core_locks_held(), 0);
}

TEST(CoreMutex, ACarrierLockIsCountedWhileHeld) {
  auto c = std::make_shared<CPU>(DType::Int32(), 4);
  int inside = 0;
  c->read_locked("read", [&](const SlotReader&) { inside = core_locks_held(); });
  EXPECT_EQ(inside, 1);
  EXPECT_EQ(core_locks_held(), 0);
}

TEST(CoreMutex, AThrowingHolderLeavesTheCountBalanced) {
  auto c = std::make_shared<CPU>(DType::Int32(), 4);
  EXPECT_THROW(c->read_range(3, 5), std::exception);
  EXPECT_THROW(c->read_locked("read", [](const SlotReader&) { throw std::runtime_error("x"); }),
               std::runtime_error);
  EXPECT_EQ(core_locks_held(), 0);
}

TEST(CoreMutex, TheForkGateCountsTheThreadsHoldingALock) {
  CoreMutex a;
  std::mutex mu;
  std::condition_variable cv;
  bool holding = false;
  bool release = false;
  const int before = threads_holding_core_locks();
  std::thread holder([&] {
    std::lock_guard held(a);
    std::unique_lock lock(mu);
    holding = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return holding; });
  }
  EXPECT_EQ(threads_holding_core_locks(), before + 1);
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  holder.join();
  EXPECT_EQ(threads_holding_core_locks(), before);
}

// fork() waits until another thread leaves its critical section, and the
// child finds the lock free; threads that ended before the fork (their
// records gone) do not hold it up.
TEST(CoreMutex, AForkWaitsForAHolderToLeaveAndTheChildFindsTheLockFree) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (int i = 0; i < 16; ++i) {
    std::thread([] {
      CoreMutex m;
      std::lock_guard lock(m);
    }).join();
  }
  CoreMutex a;
  std::atomic<bool> locked{false};
  std::atomic<bool> unlocked{false};
  std::thread holder([&] {
    a.lock();
    locked = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    unlocked = true;
    a.unlock();
  });
  while (!locked) std::this_thread::yield();
  const pid_t child = fork();
  if (child == 0) {
    // The child: the holder's unlock happened before the fork, so the lock
    // is free here, and its gate counts no holder.
    const bool free = a.try_lock();
    if (free) a.unlock();
    _exit(free && unlocked && threads_holding_core_locks() == 0 ? 0 : 1);
  }
  ASSERT_GT(child, 0);
  EXPECT_TRUE(unlocked.load()) << "fork() returned while another thread held a core lock";
  holder.join();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace strideweave
