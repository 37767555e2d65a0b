// Evictable (spec/carrier-composition).
#include "strideweave/compose/evictable.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/layout/layout.h"
#include "strideweave/move/faults.h"
#include "strideweave/move/request.h"
#include "strideweave/ops/math.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

std::vector<Value> floats(std::initializer_list<double> xs) {
  std::vector<Value> out;
  for (double x : xs) out.emplace_back(x);
  return out;
}

std::shared_ptr<CPU> cpu(std::initializer_list<double> xs) {
  return std::make_shared<CPU>(DType::Float32(), std::nullopt, floats(xs));
}

std::shared_ptr<FileBacked> file() { return std::make_shared<FileBacked>(DType::Float32()); }

TEST(carrier_composition__evictable_takes_ownership_of_two_checked_tiers,
     construct_over_cpu_and_filebacked) {
  auto fast = cpu({1, 2, 3});
  auto slow = file();
  auto e = Evictable::make(fast, slow);
  EXPECT_EQ(e->residency(), Evictable::Residency::kResident);
  EXPECT_EQ(e->slots(), 3);
  EXPECT_EQ(e->version(), 0u);
  EXPECT_TRUE(e->is_mutable());
  EXPECT_EQ(e->read_range_values(0, 3), floats({1, 2, 3}));
  EXPECT_EQ(fast->owner(), e);
  EXPECT_EQ(slow->owner(), e);
  EXPECT_EQ(e->fast(), fast);
  EXPECT_EQ(e->slow(), slow);
  EXPECT_EQ(&e->carrier_class(), &Evictable::static_class());
  EXPECT_EQ(Evictable::static_class().definition_state(), ClassDescriptor::Definition::kFree);
  const std::string refused = message_of<RuntimeError>([&] { fast->write(0, 9.0); });
  EXPECT_NE(refused.find("owned by " + e->label()), std::string::npos) << refused;
}

TEST(carrier_composition__evictable_takes_ownership_of_two_checked_tiers,
     clause6__refuse_to_relinquish_a_tier) {
  auto fast = cpu({1});
  auto e = Evictable::make(fast, file());
  const std::string kept = message_of<RuntimeError>([&] { e->relinquish(*fast); });
  EXPECT_NE(kept.find(e->label()), std::string::npos) << kept;
  EXPECT_NE(kept.find(fast->label()), std::string::npos) << kept;
  EXPECT_EQ(fast->owner(), e);
  EXPECT_THROW(e->relinquish(*cpu({2})), ValueError);
}

TEST(carrier_composition__evictable_takes_ownership_of_two_checked_tiers, refuse_an_unusable_tier) {
  auto fast = cpu({1, 2});
  auto slow = std::make_shared<CPU>(DType::Float32(), 3);
  const std::string wrong_size = message_of<ValueError>([&] { Evictable::make(fast, slow); });
  EXPECT_NE(wrong_size.find(slow->label()), std::string::npos) << wrong_size;
  EXPECT_THROW(Evictable::make(fast, fast), ValueError);
  EXPECT_THROW(Evictable::make(fast, std::make_shared<CPU>(DType::Int32())), TypeError);
  {
    Lease lease = fast->pin("move #0");
    const std::string pinned = message_of<RuntimeError>([&] { Evictable::make(fast, file()); });
    EXPECT_NE(pinned.find("pinned by move #0"), std::string::npos) << pinned;
  }
  auto owner = std::make_shared<Generic>(DType::Float32(), 1);
  auto owned = file();
  owner->take_ownership(*owned);
  const std::string taken = message_of<RuntimeError>([&] { Evictable::make(fast, owned); });
  EXPECT_NE(taken.find("slow tier " + owned->label()), std::string::npos) << taken;
  EXPECT_NE(taken.find("owned by " + owner->label()), std::string::npos) << taken;
  auto frozen = std::make_shared<CPU>(DType::Float32(), std::nullopt, floats({1}), false);
  EXPECT_THROW(Evictable::make(frozen, file()), RuntimeError);
  EXPECT_EQ(fast->owner(), nullptr);
  EXPECT_EQ(fast->version(), 0u);
  EXPECT_EQ(fast->read_range_values(0, 2), floats({1, 2}));
  EXPECT_EQ(owned->owner(), owner);
}

TEST(carrier_composition__evictable_moves_its_values_between_tiers_without_a_public_move,
     evict_and_promote_a_round_trip) {
  for (const bool generic_slow : {false, true}) {
    auto fast = cpu({1, 2, 3, 4});
    std::shared_ptr<Carrier> slow =
        generic_slow ? std::shared_ptr<Carrier>(std::make_shared<Generic>(DType::Float32()))
                     : std::shared_ptr<Carrier>(file());
    auto e = Evictable::make(fast, slow);
    const VersionToken token = e->version_token();
    e->evict();
    EXPECT_EQ(e->residency(), Evictable::Residency::kEvicted);
    EXPECT_TRUE(fast->is_released());
    EXPECT_EQ(fast->owner(), nullptr);
    EXPECT_NE(e->fast(), fast);
    EXPECT_EQ(e->fast()->slots(), 0);
    EXPECT_EQ(e->fast()->owner(), e);
    EXPECT_EQ(slow->read_range_values(0, 4), floats({1, 2, 3, 4}));
    EXPECT_EQ(e->read_range_values(0, 4), floats({1, 2, 3, 4}));
    EXPECT_TRUE(token.is_current());
    e->write(1, 7.0);
    EXPECT_EQ(slow->read(1), Value(7.0));
    e->evict();  // already evicted: nothing
    EXPECT_EQ(e->residency(), Evictable::Residency::kEvicted);
    e->promote();
    EXPECT_EQ(e->residency(), Evictable::Residency::kResident);
    EXPECT_EQ(e->fast()->read_range_values(0, 4), floats({1, 7, 3, 4}));
    EXPECT_EQ(e->read_range_values(0, 4), floats({1, 7, 3, 4}));
    EXPECT_EQ(e->version(), 1u);
    e->promote();  // already resident: nothing
    EXPECT_EQ(e->version(), 1u);
  }
}

TEST(carrier_composition__an_evictable_transition_pins_it_and_fails_atomically,
     keep_everything_after_a_failed_transition) {
  for (const MoveStage stage : {MoveStage::kAllocation, MoveStage::kCopy}) {
    auto fast = cpu({5, 6});
    auto slow = file();
    auto e = Evictable::make(fast, slow);
    e->write(0, 8.0);
    inject_move_fault(stage, std::make_exception_ptr(RuntimeError("injected tier failure")));
    const std::string failed = message_of<RuntimeError>([&] { e->evict(); });
    EXPECT_EQ(failed, "injected tier failure");
    EXPECT_EQ(clear_move_faults(), 0);
    EXPECT_EQ(e->residency(), Evictable::Residency::kResident);
    EXPECT_EQ(e->version(), 1u);
    EXPECT_EQ(e->read_range_values(0, 2), floats({8, 6}));
    EXPECT_EQ(e->fast(), fast);
    EXPECT_EQ(fast->owner(), e);
    EXPECT_EQ(slow->owner(), e);
    EXPECT_EQ(e->pinned_by(), std::nullopt);
    e->evict();
    inject_move_fault(stage, std::make_exception_ptr(RuntimeError("injected tier failure")));
    EXPECT_THROW(e->promote(), RuntimeError);
    clear_move_faults();
    EXPECT_EQ(e->residency(), Evictable::Residency::kEvicted);
    EXPECT_EQ(e->read_range_values(0, 2), floats({8, 6}));
    EXPECT_EQ(e->version(), 1u);
    e->promote();
    EXPECT_EQ(e->read_range_values(0, 2), floats({8, 6}));
  }
}

TEST(carrier_composition__an_evictable_transition_pins_it_and_fails_atomically,
     read_during_an_eviction) {
  constexpr int64_t n = 1 << 20;
  auto fast = std::make_shared<CPU>(DType::Float32(), n);
  auto e = Evictable::make(fast, file());
  e->write(n - 1, 3.0);
  std::atomic<bool> done{false};
  std::atomic<int64_t> reads{0};
  std::thread reader([&] {
    while (!done) {
      EXPECT_EQ(e->read(n - 1), Value(3.0));
      EXPECT_EQ(e->read(0), Value(0.0));
      ++reads;
    }
  });
  // Each transition waits for the reader's next read, so reads interleave with
  // the transitions on any scheduling (a count, not a timing).
  const auto next_read = [&] {
    const int64_t seen = reads.load();
    while (reads.load() == seen) std::this_thread::yield();
  };
  next_read();
  for (int round = 0; round < 4; ++round) {
    e->evict();
    next_read();
    e->promote();
    next_read();
  }
  done = true;
  reader.join();
  EXPECT_GE(reads.load(), 9);
  EXPECT_EQ(e->version(), 1u);
}

TEST(carrier_composition__an_evictable_transition_pins_it_and_fails_atomically,
     refuse_a_transition_of_a_pinned_or_released_evictable) {
  auto e = Evictable::make(cpu({1}), file());
  {
    Lease lease = e->pin("move #1");
    const std::string pinned = message_of<RuntimeError>([&] { e->evict(); });
    EXPECT_NE(pinned.find("pinned by move #1"), std::string::npos) << pinned;
    EXPECT_NE(pinned.find(e->label()), std::string::npos) << pinned;
  }
  e->release();
  EXPECT_NE(message_of<RuntimeError>([&] { e->promote(); }).find("released"), std::string::npos);
}

TEST(carrier_composition__evictable_reads_and_writes_in_either_residency,
     allocate_copy_and_release_an_evictable) {
  auto e = Evictable::make(std::make_shared<CPU>(DType::Int32()),
                           std::make_shared<Generic>(DType::Int32()));
  EXPECT_EQ(e->slots(), 0);
  e->allocate(3);
  EXPECT_EQ(e->slots(), 3);
  EXPECT_EQ(e->fast()->slots(), 3);
  EXPECT_EQ(e->version(), 1u);
  const std::vector<std::byte> encoded = e->read_range(0, 3);
  EXPECT_EQ(encoded.size(), 12u);
  e->evict();
  e->write_range_values(1, std::vector<Value>{Value(int64_t{4}), Value(int64_t{5})});
  EXPECT_EQ(e->slow()->read(2), Value(int64_t{5}));
  auto like = std::dynamic_pointer_cast<Evictable>(e->new_like());
  ASSERT_NE(like, nullptr);
  EXPECT_EQ(like->slots(), 0);
  EXPECT_EQ(like->residency(), Evictable::Residency::kResident);
  EXPECT_EQ(like->owner(), nullptr);
  auto fast = e->fast();
  auto slow = e->slow();
  e->release();
  EXPECT_TRUE(e->is_released());
  EXPECT_TRUE(fast->is_released());
  EXPECT_TRUE(slow->is_released());
  EXPECT_EQ(slow->owner(), e);
  EXPECT_NE(e->new_like(), nullptr);
}

TEST(carrier_composition__evictable_refuses_dlpack_export,
     clause1__refuse_export_in_either_residency) {
  auto e = Evictable::make(cpu({1, 2}), file());
  for (int round = 0; round < 2; ++round) {
    const std::string refused = message_of<BufferError>([&] { e->dlpack_info(); });
    EXPECT_NE(refused.find("Evictable"), std::string::npos) << refused;
    e->evict();
  }
}

// A binary operation reading a tier together with a carrier, concurrently with
// one reading the Evictable together with the same carrier: the first copies
// each operand under its own lock, so the two cannot deadlock
// (docs/threading.md, lock nesting).
TEST(Evictable, an_operation_on_a_tier_and_one_on_the_evictable_do_not_deadlock) {
  constexpr int kSlots = 4096;
  std::vector<Value> ones(kSlots, Value(1.0));
  auto fast = std::make_shared<CPU>(DType::Float32(), std::nullopt, ones);
  auto e = Evictable::make(fast, file());
  auto other = std::make_shared<CPU>(DType::Float32(), std::nullopt, ones);
  const Layout layout{IntTuple(int64_t{kSlots})};
  const auto tier_view = Tensor::make(fast, layout);
  const auto evictable_view = Tensor::make(e, layout);
  const auto other_view = Tensor::make(other, layout);
  std::atomic<int> finished{0};
  const auto run = [&](const std::shared_ptr<Tensor>& view) {
    for (int i = 0; i < 300; ++i) {
      const auto sum = ops::add(view, other_view);
      EXPECT_EQ(sum->subtensor("test").carrier->read(kSlots - 1), Value(2.0));
    }
    ++finished;
  };
  std::thread tier_thread(run, tier_view);
  std::thread evictable_thread(run, evictable_view);
  tier_thread.join();
  evictable_thread.join();
  EXPECT_EQ(finished.load(), 2);
}

}  // namespace
}  // namespace strideweave
