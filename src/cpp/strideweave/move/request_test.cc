// The move request's core path (spec/interop-movement movement requirements;
// the Python suite binds the scenarios).
#include "strideweave/move/request.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/move/legacy_registry.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

std::vector<Value> floats(std::initializer_list<double> xs) {
  return std::vector<Value>(xs.begin(), xs.end());
}

std::shared_ptr<const Tensor> wait(const std::shared_ptr<MoveRequest>& request) {
  return request->completion().wait();
}

TEST(MoveRequest, moves_a_view_with_holes_and_releases_the_source) {
  for (const bool generic_destination : {false, true}) {
    auto source = std::make_shared<CPU>(DType::Float32(), std::nullopt,
                                        floats({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
    const Layout holes(IntTuple::tuple({2, 3}), IntTuple::tuple({1, 3}));  // cosize 8
    const auto tensor = Tensor::make(source, holes, 1);
    const std::vector<Value> expected = tensor->values();
    std::shared_ptr<Carrier> destination =
        generic_destination ? std::shared_ptr<Carrier>(std::make_shared<Generic>(DType::Float32()))
                            : std::shared_ptr<Carrier>(std::make_shared<CPU>(DType::Float32()));
    const auto result = wait(MoveRequest::initiate(tensor, destination));
    EXPECT_EQ(result->values(), expected);
    EXPECT_EQ(result->subtensor("test").carrier, destination);
    EXPECT_EQ(result->subtensor("test").offset, 0);
    EXPECT_EQ(result->subtensor("test").layout, holes);
    EXPECT_EQ(destination->slots(), 8);     // allocated to exactly cosize
    EXPECT_EQ(destination->version(), 0u);  // no mutation, the allocation included
    EXPECT_EQ(destination->moves_received(), 1u);
    EXPECT_TRUE(source->is_released());
    EXPECT_EQ(source->version(), 0u);
    EXPECT_EQ(destination->pinned_by(), std::nullopt);
  }
}

// A CPU that records, per allocation, whether it was asked for zeros.
class AllocationRecordingCPU : public CPU {
 public:
  using CPU::CPU;
  std::vector<bool> zeroed;

 protected:
  void do_allocate(int64_t n) override {
    zeroed.push_back(true);
    CPU::do_allocate(n);
  }
  bool do_allocate_for_overwrite(int64_t n) override {
    zeroed.push_back(false);
    return CPU::do_allocate_for_overwrite(n);
  }
};

TEST(MoveRequest, an_empty_destination_is_zeroed_only_when_the_transfer_leaves_slots_unwritten) {
  struct Case {
    const char* name;
    Layout layout;
    bool zeroed;
  };
  const Case cases[] = {
      {"compact", Layout(IntTuple(8)), false},
      {"transposed compact", Layout(IntTuple::tuple({2, 4}), IntTuple::tuple({4, 1})), false},
      {"nested compact",
       Layout(IntTuple::tuple({2, IntTuple::tuple({2, 2})}),
              IntTuple::tuple({4, IntTuple::tuple({1, 2})})),
       false},
      {"holes", Layout(IntTuple::tuple({2, 3}), IntTuple::tuple({1, 3})), true},
      {"broadcast", Layout(IntTuple::tuple({2, 3}), IntTuple::tuple({1, 0})), true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Value> values;
    for (int64_t i = 0; i < c.layout.cosize(); ++i) values.emplace_back(static_cast<double>(i + 1));
    auto source = std::make_shared<CPU>(DType::Float32(), std::nullopt, values);
    const auto tensor = Tensor::make(source, c.layout);
    const std::vector<Value> expected = tensor->values();
    auto destination = std::make_shared<AllocationRecordingCPU>(DType::Float32());
    const auto result = wait(MoveRequest::initiate(tensor, destination));
    EXPECT_EQ(result->values(), expected);
    EXPECT_EQ(destination->zeroed, std::vector<bool>{c.zeroed});
  }
}

TEST(MoveRequest, only_a_transfer_that_promises_every_slot_skips_the_zeroing) {
  const Layout compact(IntTuple(8));
  const Layout holes(IntTuple::tuple({2, 3}), IntTuple::tuple({1, 3}));
  const ElementwiseMoveOperation elementwise;
  EXPECT_TRUE(fills_every_slot(elementwise, compact));
  EXPECT_FALSE(fills_every_slot(elementwise, holes));
  const FileBackedToCpuMoveOperation span;
  EXPECT_TRUE(fills_every_slot(span, compact));
  EXPECT_TRUE(fills_every_slot(span, holes));  // the whole span, holes included
  // A transfer promising nothing (a caller's provider) keeps the zeroing.
  struct Unknown : PreparedTransfer {
    void start(const MoveTransfer& /*transfer*/, TransferDone done) override { done(); }
  } const unknown;
  EXPECT_FALSE(fills_every_slot(unknown, compact));
}

TEST(MoveRequest, a_broadcast_needs_only_its_cosize) {
  auto source = std::make_shared<Generic>(DType::Float32(), std::nullopt, floats({4, 5}));
  const Layout broadcast(IntTuple::tuple({2, 3}), IntTuple::tuple({1, 0}));
  const auto tensor = Tensor::make(source, broadcast);
  auto destination = std::make_shared<CPU>(DType::Float32(), 2);
  const auto result = wait(MoveRequest::initiate(tensor, destination));
  EXPECT_EQ(result->subtensor("test").layout, broadcast);
  EXPECT_EQ(result->values(), floats({4, 5, 4, 5, 4, 5}));
}

TEST(MoveRequest, a_move_of_nothing_still_counts_as_received) {
  auto source = std::make_shared<CPU>(DType::Float32(), 2);
  auto destination = std::make_shared<Generic>(DType::Float32(), 1);
  const auto result = wait(MoveRequest::initiate(Tensor::make(source, Layout(0)), destination));
  EXPECT_EQ(result->values(), floats({}));
  EXPECT_EQ(destination->version(), 0u);
  EXPECT_EQ(destination->moves_received(), 1u);
  EXPECT_EQ(destination->slots(), 1);
  EXPECT_TRUE(source->is_released());
}

TEST(MoveRequest, bulk_routes_move_through_a_file_and_back) {
  auto source = std::make_shared<CPU>(DType::Float32(), std::nullopt, floats({1, 2, 3, 4, 5}));
  const Layout strided(IntTuple::tuple({2}), IntTuple::tuple({2}));
  auto file = std::make_shared<FileBacked>(DType::Float32());
  const auto in_file = wait(MoveRequest::initiate(Tensor::make(source, strided, 1), file));
  EXPECT_EQ(in_file->values(), floats({2, 4}));
  EXPECT_EQ(file->read_range_values(0, 3), floats({2, 3, 4}));  // the whole span, hole included
  auto back = std::make_shared<CPU>(DType::Float32());
  const auto result = wait(MoveRequest::initiate(in_file, back));
  EXPECT_EQ(result->values(), floats({2, 4}));
  EXPECT_TRUE(file->is_released());
}

TEST(MoveRequest, validation_refuses_before_changing_anything) {
  auto source = std::make_shared<CPU>(DType::Float32(), std::nullopt, floats({1, 2, 3}));
  const auto tensor = Tensor::make(source, Layout(3));
  const auto small = std::make_shared<CPU>(DType::Float32(), 2);
  const std::string too_small =
      message_of<ValueError>([&] { MoveRequest::initiate(tensor, small); });
  EXPECT_NE(too_small.find("cosize 3"), std::string::npos) << too_small;
  const auto ints = std::make_shared<CPU>(DType::Int32(), 3);
  EXPECT_THROW(MoveRequest::initiate(tensor, ints), TypeError);
  EXPECT_THROW(MoveRequest::initiate(tensor, source), ValueError);
  const auto frozen =
      std::make_shared<CPU>(DType::Float32(), std::nullopt, floats({0, 0, 0}), false);
  EXPECT_THROW(MoveRequest::initiate(tensor, frozen), RuntimeError);
  // The first failing row wins: a released source before a wrong dtype.
  auto gone = std::make_shared<CPU>(DType::Float32(), 3);
  const auto stale = Tensor::make(gone, Layout(3));
  gone->release();
  const std::string released =
      message_of<RuntimeError>([&] { MoveRequest::initiate(stale, ints); });
  EXPECT_NE(released.find("is released"), std::string::npos) << released;
  for (const auto& c : {std::shared_ptr<Carrier>(small), std::shared_ptr<Carrier>(ints)}) {
    EXPECT_EQ(c->version(), 0u);
    EXPECT_EQ(c->pinned_by(), std::nullopt);
  }
  EXPECT_FALSE(source->is_released());
  EXPECT_EQ(source->version(), 0u);
}

class FailingMove : public MoveOperation {
 public:
  static const ClassDescriptor& static_class() {
    static const ClassDescriptor& d =
        *ClassDescriptor::move_operation(
             "FailingMove", &MoveOperation::static_class(), nullptr, nullptr,
             [](const ClassDescriptor&) -> std::shared_ptr<MoveOperation> {
               return std::make_shared<FailingMove>();
             })
             .release();
    return d;
  }
  const ClassDescriptor& operation_class() const override { return static_class(); }
  void copy(const MoveTransfer& transfer) override {
    transfer.destination->write(0, 9.0);  // admitted: the request's thread
    throw std::runtime_error("copy failed");
  }
};

TEST(MoveRequest, a_failed_copy_restores_the_source_and_records_the_failure) {
  auto source = std::make_shared<CPU>(DType::Float32(), std::nullopt, floats({1, 2}));
  auto destination = std::make_shared<Generic>(DType::Float32(), 2);
  LegacyMoveRegistry::global().add(CPU::static_class(), Generic::static_class(),
                                   FailingMove::static_class());
  const auto request = MoveRequest::initiate(Tensor::make(source, Layout(2)), destination);
  LegacyMoveRegistry::global().remove(CPU::static_class(), Generic::static_class());
  EXPECT_TRUE(request->completion().done());
  EXPECT_THROW(request->completion().wait(), std::runtime_error);
  EXPECT_FALSE(source->is_released());
  EXPECT_EQ(source->version(), 0u);
  EXPECT_EQ(source->read_range_values(0, 2), floats({1, 2}));
  EXPECT_EQ(source->pinned_by(), std::nullopt);
  EXPECT_EQ(destination->pinned_by(), std::nullopt);
  EXPECT_EQ(destination->version(), 1u);  // it was written: its slots are unspecified
  EXPECT_TRUE(source->is_mutable());
}

}  // namespace
}  // namespace strideweave
