// CoreMutex's per-thread count of held core locks (docs/threading.md).
#include "strideweave/exec/core_mutex.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace strideweave
