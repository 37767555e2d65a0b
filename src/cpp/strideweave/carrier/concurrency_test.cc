// Carriers used from many threads at once (spec/carrier-storage; run under
// ThreadSanitizer by tox -e tsan).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/carrier/owner_path.h"
#include "strideweave/layout/layout.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"

namespace strideweave {
namespace {

constexpr int64_t kSlots = 64;
constexpr int kRounds = 300;

std::vector<std::byte> filled(int32_t value) {
  std::vector<std::byte> bytes(kSlots * sizeof(int32_t));
  for (int64_t i = 0; i < kSlots; ++i) std::memcpy(&bytes[i * sizeof(int32_t)], &value, 4);
  return bytes;
}

// True when every slot of the snapshot holds the same value.
bool uniform(const std::vector<Value>& values) {
  for (const Value& v : values) {
    if (v != values.front()) return false;
  }
  return true;
}

// Writers (public ranges, public slots, a pinning operation's lease), readers
// (ranges, tensor snapshots, tokens) and finally a releaser share one carrier.
// Each successful write counts once in the version; every snapshot is one
// write's values; every failure is the documented RuntimeError.
void hammer(const std::shared_ptr<Carrier>& c) {
  std::atomic<uint64_t> successful_writes{0};
  std::atomic<int> torn_snapshots{0};
  std::atomic<int> unexpected_errors{0};
  std::atomic<bool> released{false};
  std::atomic<int> writers_done{0};  // the four writing threads below
  const auto expected_failure = [&](const RuntimeError& e) {
    const std::string m = e.what();
    if (m.find("pinned by") == std::string::npos && m.find("released") == std::string::npos) {
      ++unexpected_errors;
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      for (int r = 0; r < kRounds; ++r) {
        try {
          if (c->dtype().itemsize()) {
            c->write_range(0, filled(w * 1000 + r));
          } else {
            const std::vector<Value> values(kSlots, Value(int64_t{w * 1000 + r}));
            c->write_range_values(0, values);
          }
          ++successful_writes;
        } catch (const RuntimeError& e) {
          expected_failure(e);
        }
      }
      ++writers_done;
    });
  }
  threads.emplace_back([&] {  // single-slot writes: no uniformity, but counted
    for (int r = 0; r < kRounds; ++r) {
      for (const int64_t value : {-1, -2}) {
        try {
          c->write(r % kSlots, value);
          ++successful_writes;
        } catch (const RuntimeError& e) {
          expected_failure(e);
        }
      }
    }
    ++writers_done;
  });
  threads.emplace_back([&] {  // an operation pinning the carrier and writing through its lease
    for (int r = 0; r < kRounds / 3; ++r) {
      try {
        Lease lease = c->pin("move " + std::to_string(r));
        const std::vector<Value> values(kSlots, Value(int64_t{5000 + r}));
        lease.write_range_values(0, values);
        ++successful_writes;
        lease.end();
      } catch (const RuntimeError& e) {
        expected_failure(e);
      }
    }
    ++writers_done;
  });
  const std::shared_ptr<Tensor> view = Tensor::make(c, Layout(IntTuple(kSlots)), 0);
  for (int reader = 0; reader < 2; ++reader) {
    threads.emplace_back([&] {
      for (int r = 0; r < kRounds; ++r) {
        try {
          const VersionToken token = c->version_token();
          const std::vector<Value> range = c->read_range_values(0, kSlots);
          const std::vector<Value> snapshot = view->values();
          // A single-slot writer's values (-1, -2) may appear; range writes never tear.
          const auto one_write = [](const std::vector<Value>& v) {
            std::vector<Value> rest;
            for (const Value& x : v) {
              if (x != Value(int64_t{-1}) && x != Value(int64_t{-2})) rest.push_back(x);
            }
            return rest.empty() || uniform(rest);
          };
          if (!one_write(range) || !one_write(snapshot)) ++torn_snapshots;
          static_cast<void>(token.is_current());
          static_cast<void>(c->pinned_by());
          static_cast<void>(c->is_mutable());
        } catch (const RuntimeError& e) {
          expected_failure(e);
        }
      }
    });
  }
  // The releaser, once writes are under way (or every writer has finished, as
  // when pins refused most of them): retries while pinned.
  threads.emplace_back([&] {
    while (successful_writes.load() < kRounds && writers_done.load() < 4) {
      std::this_thread::yield();
    }
    while (!released) {
      try {
        c->release();
        released = true;
      } catch (const RuntimeError& e) {
        expected_failure(e);
        std::this_thread::yield();
      }
    }
  });
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(c->is_released());
  EXPECT_EQ(c->version(), successful_writes.load());
  EXPECT_EQ(torn_snapshots.load(), 0);
  EXPECT_EQ(unexpected_errors.load(), 0);
  EXPECT_EQ(core_locks_held(), 0);
}

TEST(carrier_storage__carriers_are_safe_to_use_from_any_thread, use_one_carrier_from_many_threads) {
  hammer(std::make_shared<CPU>(DType::Int32(), kSlots));
}

TEST(carrier_storage__carriers_are_safe_to_use_from_any_thread,
     use_one_carrier_from_many_threads__generic) {
  hammer(std::make_shared<Generic>(DType::Any(), kSlots));
}

// take_ownership and relinquish lock two carriers together; taking them in
// opposite orders on two threads must not deadlock.
TEST(carrier_storage__carriers_are_safe_to_use_from_any_thread,
     take_ownership_in_opposite_directions) {
  auto a = std::make_shared<CPU>(DType::Int32(), 2);
  auto b = std::make_shared<CPU>(DType::Int32(), 2);
  std::atomic<int> refusals{0};
  std::thread forward([&] {  // locks (a, b)
    for (int r = 0; r < kRounds; ++r) {
      a->take_ownership(*b);
      a->relinquish(*b);
    }
  });
  std::thread backward([&] {  // locks (b, a); b never owns a
    for (int r = 0; r < kRounds; ++r) {
      try {
        b->relinquish(*a);
      } catch (const ValueError&) {
        ++refusals;
      }
    }
  });
  forward.join();
  backward.join();
  EXPECT_EQ(refusals.load(), kRounds);
  EXPECT_EQ(b->owner(), nullptr);
  EXPECT_EQ(b->version(), 0u);
}

// Two threads each try to make its carrier the owner of the other's, at once:
// exactly one succeeds and the other is refused (an ownership cycle, or the
// carrier is owned by then), so the two never own each other.
TEST(Ownership, concurrent_opposite_takes_never_form_a_cycle) {
  for (int r = 0; r < kRounds; ++r) {
    auto a = std::make_shared<CPU>(DType::Int32(), 1);
    auto b = std::make_shared<CPU>(DType::Int32(), 1);
    std::atomic<int> taken{0};
    std::atomic<int> refused{0};
    const auto take = [&](Carrier& owner, Carrier& owned) {
      try {
        owner.take_ownership(owned);
        ++taken;
      } catch (const ValueError&) {
        ++refused;  // the other thread's edge came first: a cycle
      } catch (const RuntimeError&) {
        ++refused;  // owned by then
      }
    };
    std::thread forward([&] { take(*a, *b); });
    std::thread backward([&] { take(*b, *a); });
    forward.join();
    backward.join();
    ASSERT_EQ(taken.load(), 1) << "round " << r;
    ASSERT_EQ(refused.load(), 1) << "round " << r;
    ASSERT_TRUE((a->owner() == nullptr) != (b->owner() == nullptr)) << "round " << r;
  }
}

// Every kind of call (entry points, version tokens, pins and their leases, an
// owner path) on one owned carrier from several threads at once: each
// succeeds or fails with the documented RuntimeError, and only successful
// writes count.
TEST(carrier_storage__carriers_are_safe_to_use_from_any_thread,
     clause1__every_kind_of_call_from_many_threads) {
  auto owner = std::make_shared<CPU>(DType::Int32(), 1);
  auto c = std::make_shared<CPU>(DType::Int32(), kSlots);
  owner->take_ownership(*c);
  std::atomic<uint64_t> writes{0};
  std::atomic<int> unexpected{0};
  const auto refused = [&](const RuntimeError& e) {
    if (std::string(e.what()).find("pinned by") == std::string::npos) ++unexpected;
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {  // two owner-path writers, each with its own path
    threads.emplace_back([&, w] {
      OwnerPath path = owner->owner_path(*c);
      for (int r = 0; r < kRounds; ++r) {
        try {
          path.write_range(0, filled(w * 1000 + r));
          ++writes;
        } catch (const RuntimeError& e) {
          refused(e);
        }
      }
    });
  }
  threads.emplace_back([&] {  // pins writing through their leases
    for (int r = 0; r < kRounds / 3; ++r) {
      try {
        Lease lease = c->pin("move " + std::to_string(r));
        const std::vector<Value> values(kSlots, Value(int64_t{5000 + r}));
        lease.write_range_values(0, values);
        ++writes;
      } catch (const RuntimeError& e) {
        refused(e);
      }
    }
  });
  threads.emplace_back([&] {  // public writes: refused, the carrier being owned
    for (int r = 0; r < kRounds; ++r) {
      try {
        c->write(0, int64_t{-1});
        ++unexpected;
      } catch (const RuntimeError& e) {
        if (std::string(e.what()).find("owned by") == std::string::npos &&
            std::string(e.what()).find("pinned by") == std::string::npos) {
          ++unexpected;
        }
      }
    }
  });
  std::atomic<int> torn{0};
  threads.emplace_back([&] {  // reads, tokens and accessors
    for (int r = 0; r < kRounds; ++r) {
      try {
        const VersionToken token = c->version_token();
        const std::vector<Value> range = c->read_range_values(0, kSlots);
        if (!uniform(range)) ++torn;
        static_cast<void>(token.is_current());
        static_cast<void>(c->pinned_by());
        static_cast<void>(c->owner());
      } catch (const RuntimeError& e) {
        refused(e);
      }
    }
  });
  for (std::thread& t : threads) t.join();
  EXPECT_GT(writes.load(), 0u);
  EXPECT_EQ(c->version(), writes.load());
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_EQ(c->owner(), owner);
  EXPECT_EQ(core_locks_held(), 0);
}

// The concurrency contract's second sentence, on both a byte-encoded and a
// value-only carrier: concurrent successful writes raise the version by
// exactly their number, reads never see a torn range write, and calls refused
// by a concurrent pin or release change nothing (the hammer's checks).
TEST(carrier_storage__carriers_are_safe_to_use_from_any_thread,
     clause2__calls_take_effect_entirely_or_not_at_all) {
  hammer(std::make_shared<CPU>(DType::Int32(), kSlots));
  hammer(std::make_shared<Generic>(DType::Any(), kSlots));
}

// take_ownership and relinquish naming the same two carriers in opposite
// orders, while a third carrier contends for both: no deadlock, and ownership
// stays exclusive (each carrier has at most one owner; every relinquish
// after a successful take succeeds).
TEST(carrier_storage__carriers_are_safe_to_use_from_any_thread,
     clause3__ownership_in_either_order_without_deadlock) {
  auto a = std::make_shared<CPU>(DType::Int32(), 2);
  auto b = std::make_shared<CPU>(DType::Int32(), 2);
  auto c = std::make_shared<Generic>(DType::Int32(), 2);
  std::atomic<int> taken{0};
  std::atomic<int> unexpected{0};
  std::atomic<int> ready{0};
  const auto cycle = [&](Carrier& owner, Carrier& owned) {
    ++ready;
    while (ready.load() < 4) std::this_thread::yield();  // start together
    for (int r = 0; r < 10 * kRounds; ++r) {
      try {
        owner.take_ownership(owned);
      } catch (const RuntimeError& e) {
        if (std::string(e.what()).find("owned by") == std::string::npos) ++unexpected;
        continue;
      } catch (const ValueError& e) {  // the other direction's ownership holds: a cycle
        if (std::string(e.what()).find("cannot form a cycle") == std::string::npos) ++unexpected;
        continue;
      }
      ++taken;
      if (owned.owner().get() != &owner) ++unexpected;
      owner.relinquish(owned);  // throws (failing the test) unless the take held
    }
  };
  std::thread forward([&] { cycle(*a, *b); });   // locks (a, b)
  std::thread backward([&] { cycle(*b, *a); });  // locks (b, a)
  std::thread third_a([&] { cycle(*c, *a); });   // contends for a
  std::thread third_b([&] { cycle(*c, *b); });   // contends for b
  forward.join();
  backward.join();
  third_a.join();
  third_b.join();
  EXPECT_GT(taken.load(), 0);
  EXPECT_EQ(unexpected.load(), 0);
  for (const auto& carrier : {std::shared_ptr<Carrier>(a), std::shared_ptr<Carrier>(b)}) {
    EXPECT_EQ(carrier->owner(), nullptr);
    EXPECT_EQ(carrier->version(), 0u);
  }
  EXPECT_EQ(core_locks_held(), 0);
}

}  // namespace
}  // namespace strideweave
