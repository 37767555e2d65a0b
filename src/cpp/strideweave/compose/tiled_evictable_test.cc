// TiledEvictable (spec/carrier-composition, "TiledEvictable").
#include "strideweave/compose/tiled_evictable.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/move/carrier_definition.h"
#include "strideweave/move/faults.h"
#include "strideweave/move/request.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;
using State = TiledEvictable::TileState;

// Expects f to throw E whose message names `subject`.
template <class E, class F>
void expect_error(F&& f, const std::string& subject) {
  const std::string message = message_of<E>(std::forward<F>(f));
  EXPECT_NE(message.find(subject), std::string::npos) << message;
}

std::vector<Value> range_values(int32_t n, int32_t base = 0) {
  std::vector<Value> out;
  for (int32_t i = 0; i < n; ++i) out.emplace_back(base + i);
  return out;
}

std::shared_ptr<TiledEvictable> make(int64_t n, int64_t tile_slots,
                                     std::optional<int64_t> limit = std::nullopt) {
  return TiledEvictable::create(
      DType::Int32(), std::nullopt, tile_slots, std::make_shared<CPU>(DType::Int32()),
      std::make_shared<FileBacked>(DType::Int32()), limit, range_values(static_cast<int32_t>(n)));
}

std::vector<Value> values_of(const Carrier& carrier) {
  return carrier.read_range_values(0, carrier.slots());
}

TEST(carrier_composition__tiledevictable_splits_its_slots_into_owned_tiles,
     construct_a_tiled_carrier) {
  const auto tiled = make(10, 4, 2);
  EXPECT_EQ(tiled->slots(), 10);
  EXPECT_EQ(tiled->tile_count(), 3);
  EXPECT_EQ(tiled->tile_slots(), 4);
  EXPECT_EQ(tiled->resident_limit(), 2);
  EXPECT_EQ(&tiled->fast_class(), &CPU::static_class());
  EXPECT_EQ(&tiled->slow_class(), &FileBacked::static_class());
  EXPECT_EQ(tiled->residency(), std::vector<State>(3, State::kEvicted));
  EXPECT_EQ(values_of(*tiled), range_values(10));
  EXPECT_EQ(tiled->version(), 0u);
}

TEST(carrier_composition__tiledevictable_splits_its_slots_into_owned_tiles,
     reject_a_tile_class_without_a_lowered_edge) {
  // TiledEvictable itself is definition-backed: no lowered edge leads to it.
  auto fast =
      TiledEvictable::create(DType::Int32(), 0, 1, std::make_shared<CPU>(DType::Int32()),
                             std::make_shared<Generic>(DType::Int32()), std::nullopt, std::nullopt);
  const std::string message = message_of<TypeError>([&] {
    TiledEvictable::create(DType::Int32(), 4, 2, fast, std::make_shared<Generic>(DType::Int32()),
                           std::nullopt, std::nullopt);
  });
  EXPECT_NE(message.find("TiledEvictable"), std::string::npos) << message;
  EXPECT_EQ(fast->slots(), 0);
}

TEST(carrier_composition__tiledevictable_splits_its_slots_into_owned_tiles, clause3) {
  const auto cpu = std::make_shared<CPU>(DType::Int32());
  const auto file = std::make_shared<FileBacked>(DType::Int32());
  EXPECT_NE(message_of<TypeError>([&] {
              TiledEvictable::create(DType::Any(), 4, 2, std::make_shared<Generic>(DType::Any()),
                                     std::make_shared<Generic>(DType::Any()), std::nullopt,
                                     std::nullopt);
            }).find("TiledEvictable"),
            std::string::npos);
  EXPECT_NE(message_of<ValueError>([&] {
              TiledEvictable::create(DType::Int32(), 4, 0, cpu, file, std::nullopt, std::nullopt);
            }).find("tile_slots"),
            std::string::npos);
  EXPECT_NE(message_of<ValueError>([&] {
              TiledEvictable::create(DType::Int32(), 4, 2, cpu, file, 0, std::nullopt);
            }).find("resident_limit"),
            std::string::npos);
  EXPECT_NE(message_of<TypeError>([&] {
              TiledEvictable::create(DType::Int32(), 4, 2, std::make_shared<CPU>(DType::Float32()),
                                     file, std::nullopt, std::nullopt);
            }).find("fast prototype"),
            std::string::npos);
}

TEST(carrier_composition__tiledevictable_reads_and_writes_any_slot_in_either_tile_state,
     write_a_resident_tile_and_an_evicted_tile) {
  const auto tiled = make(10, 4);
  tiled->make_resident({0})->wait();
  tiled->write(1, int32_t{41});
  tiled->write(9, int32_t{49});
  EXPECT_EQ(tiled->version(), 2u);
  std::vector<Value> expected = range_values(10);
  expected[1] = int32_t{41};
  expected[9] = int32_t{49};
  EXPECT_EQ(values_of(*tiled), expected);
  EXPECT_EQ(tiled->residency(),
            (std::vector<State>{State::kResident, State::kEvicted, State::kEvicted}));
  tiled->evict({0})->wait();
  tiled->make_resident({0, 1, 2})->wait();
  EXPECT_EQ(values_of(*tiled), expected);
  EXPECT_EQ(tiled->version(), 2u);
  expect_error<RuntimeError>([&] { tiled->allocate(3); }, "TiledEvictable");
  expect_error<BufferError>([&] { tiled->dlpack_info(); }, "TiledEvictable");
}

TEST(carrier_composition__tile_residency_is_bounded_and_evicts_the_least_recently_used_tile_first,
     evict_the_least_recently_used_tile) {
  const auto tiled = make(10, 4, 2);
  tiled->make_resident({0, 1})->wait();
  tiled->make_resident({0})->wait();
  tiled->make_resident({2})->wait();
  EXPECT_EQ(tiled->residency(),
            (std::vector<State>{State::kResident, State::kEvicted, State::kResident}));
  EXPECT_EQ(tiled->use_order(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(values_of(*tiled), range_values(10));
  EXPECT_EQ(tiled->version(), 0u);
}

TEST(carrier_composition__projection_completes_with_one_compact_ordinary_tensor,
     project_a_window_across_tiles) {
  const auto tiled = make(24, 5);
  const Layout layout(IntTuple::tuple({3, IntTuple::tuple({2, 2})}),
                      IntTuple::tuple({2, IntTuple::tuple({7, 1})}));
  const std::shared_ptr<const Tensor> result = tiled->project(layout, 3)->wait();
  const auto oracle = Tensor::make(
      std::make_shared<CPU>(DType::Int32(), std::nullopt, range_values(24)), layout, 3);
  EXPECT_EQ(result->values(), oracle->values());
  EXPECT_EQ(result->subtensor("test").layout, Layout(layout.shape()));
  EXPECT_EQ(&result->subtensor("test").carrier->carrier_class(), &CPU::static_class());
  EXPECT_EQ(tiled->residency(),
            (std::vector<State>{State::kResident, State::kResident, State::kResident,
                                State::kResident, State::kEvicted}));
}

TEST(carrier_composition__projection_completes_with_one_compact_ordinary_tensor,
     reject_a_window_outside_the_slots) {
  const auto tiled = make(10, 4, 2);
  expect_error<IndexError>([&] { tiled->project(Layout(IntTuple{4}, IntTuple{3}), 1); },
                           "10 slots");
  expect_error<ValueError>([&] { tiled->project(Layout(IntTuple{3}), -1); }, "offset");
  expect_error<ValueError>([&] { tiled->project(Layout(IntTuple{10}), 0); }, "resident_limit");
  EXPECT_EQ(tiled->residency(), std::vector<State>(3, State::kEvicted));
  EXPECT_FALSE(tiled->pinned_by().has_value());
}

TEST(carrier_composition__a_failed_tile_transfer_leaves_every_tile_consistent,
     fail_a_projections_tile_load) {
  const auto tiled = make(10, 4);
  const auto error = std::make_exception_ptr(RuntimeError("injected"));
  inject_move_fault(MoveStage::kCopy, error);
  const auto completion = tiled->project(Layout(IntTuple{6}), 0);
  for (int i = 0; i < 2; ++i) {
    try {
      completion->wait();
      ADD_FAILURE() << "the projection succeeded";
    } catch (const RuntimeError& e) {
      EXPECT_STREQ(e.what(), "injected");
    }
  }
  EXPECT_EQ(completion->error(), error);
  EXPECT_EQ(tiled->residency(), std::vector<State>(3, State::kEvicted));
  EXPECT_EQ(values_of(*tiled), range_values(10));
  EXPECT_EQ(tiled->version(), 0u);
  EXPECT_FALSE(tiled->pinned_by().has_value());
  tiled->make_resident({0})->wait();
  EXPECT_EQ(tiled->residency()[0], State::kResident);
}

TEST(carrier_composition__tiledevictable_is_definition_backed_with_one_projection_route,
     move_a_tiledevictable_window_to_cpu) {
  const ClassDescriptor& cls = TiledEvictable::static_class();
  ASSERT_NE(cls.definition(), nullptr);
  ASSERT_EQ(cls.definition()->routes().size(), 1u);
  const TransferRoute& route = cls.definition()->routes()[0];
  EXPECT_EQ(route.route_id, "tiled-evictable/projection");
  EXPECT_EQ(route.destination, &CPU::static_class());
  EXPECT_FALSE(cls.definition()->elementwise_fallback());
  EXPECT_EQ(resolve_move_route(cls, CPU::static_class()).route, &route);
  expect_error<NotImplementedError>([&] { resolve_move_route(cls, FileBacked::static_class()); },
                                    "FileBacked");
}

}  // namespace
}  // namespace strideweave
