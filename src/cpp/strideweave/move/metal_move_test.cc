// Moves to, from and between Metal carriers through the three exact Metal
// move operations (move/move_operation.h), over the emulated device queue.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/metal.h"
#include "strideweave/device/emulated.h"
#include "strideweave/move/faults.h"
#include "strideweave/move/legacy_registry.h"
#include "strideweave/move/lowered.h"
#include "strideweave/move/metal_move_operation.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/move/request.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

class MetalMove : public ::testing::Test {
 protected:
  void SetUp() override { reset(); }
  void TearDown() override {
    EXPECT_EQ(device::clear_emulated_faults(), 0) << "a device fault was left armed";
    EXPECT_EQ(clear_move_faults(), 0) << "a move fault was left armed";
    reset();
  }
  static void reset() {
    device::set_emulated_latency(std::chrono::microseconds(0));
    device::clear_emulated_faults();
    clear_move_faults();
    device::metal_queue().synchronize();
  }
};

// `n` Float32 values start, start + 1, ...
std::vector<Value> counting(int64_t n, double start) {
  std::vector<Value> out;
  for (int64_t i = 0; i < n; ++i) out.emplace_back(start + static_cast<double>(i));
  return out;
}

std::vector<Value> all_slots(const Carrier& carrier) {
  return carrier.read_range_values(0, carrier.slots());
}

std::shared_ptr<const Tensor> move_to(const std::shared_ptr<const Tensor>& tensor,
                                      const std::shared_ptr<Carrier>& destination) {
  return MoveRequest::initiate(tensor, destination)->completion().wait();
}

// ((2, (2, 2)) : (1, (3, 8))): hierarchical, with holes; cosize 13.
Layout hierarchical() {
  return Layout(IntTuple::tuple({2, IntTuple::tuple({2, 2})}),
                IntTuple::tuple({1, IntTuple::tuple({3, 8})}));
}

TEST_F(MetalMove, the_registry_serves_the_exact_metal_pairs) {
  const LegacyMoveRegistry& registry = LegacyMoveRegistry::global();
  EXPECT_EQ(&registry.dispatch(CPU::static_class(), Metal::static_class()),
            &CpuToMetalMoveOperation::static_class());
  EXPECT_EQ(&registry.dispatch(Metal::static_class(), CPU::static_class()),
            &MetalToCpuMoveOperation::static_class());
  EXPECT_EQ(&registry.dispatch(Metal::static_class(), Metal::static_class()),
            &MetalToMetalMoveOperation::static_class());
  const auto operation = CpuToMetalMoveOperation::static_class().make_operation();
  ASSERT_NE(operation, nullptr);
  EXPECT_TRUE(operation->supports_dtype(DType::Float32()));
  EXPECT_TRUE(operation->supports_dtype(DType::Bool()));
  EXPECT_FALSE(operation->supports_dtype(DType::Any()));
}

TEST_F(MetalMove, cpu_to_metal_and_back_preserves_the_layout_and_the_physical_span) {
  const Layout layout = hierarchical();
  ASSERT_EQ(layout.cosize(), 13);
  const int64_t offset = 2;
  auto source = std::make_shared<CPU>(DType::Float32(), std::nullopt, counting(16, 10));
  const auto tensor = Tensor::make(source, layout, offset);
  const std::vector<Value> expected = tensor->values();
  const std::vector<Value> span = source->read_range_values(offset, 13);

  auto metal = std::make_shared<Metal>(DType::Float32());
  const auto on_device = move_to(tensor, metal);
  EXPECT_EQ(on_device->subtensor("test").carrier, metal);
  EXPECT_EQ(on_device->subtensor("test").offset, 0);
  EXPECT_EQ(on_device->subtensor("test").layout, layout);
  EXPECT_EQ(metal->slots(), 13);
  EXPECT_EQ(metal->version(), 0u);  // a move is no in-place mutation
  EXPECT_EQ(metal->moves_received(), 1u);
  EXPECT_EQ(all_slots(*metal), span);  // the holes travel too
  EXPECT_EQ(on_device->values(), expected);
  EXPECT_TRUE(source->is_released());
  EXPECT_EQ(source->version(), 0u);
  EXPECT_EQ(metal->pinned_by(), std::nullopt);

  auto back = std::make_shared<CPU>(DType::Float32());
  const auto on_host = move_to(on_device, back);
  EXPECT_EQ(on_host->subtensor("test").layout, layout);
  EXPECT_EQ(on_host->subtensor("test").offset, 0);
  EXPECT_EQ(on_host->values(), expected);
  EXPECT_EQ(all_slots(*back), span);
  EXPECT_EQ(back->version(), 0u);
  EXPECT_EQ(back->moves_received(), 1u);
  EXPECT_TRUE(metal->is_released());
  EXPECT_EQ(metal->version(), 0u);
}

TEST_F(MetalMove, into_a_destination_that_already_holds_the_slots) {
  auto source = std::make_shared<CPU>(DType::Int32(), std::nullopt,
                                      std::vector<Value>{Value(int64_t{4}), Value(int64_t{5})});
  auto metal = std::make_shared<Metal>(DType::Int32(), 3);  // more than cosize
  metal->write(2, Value(int64_t{9}));
  const uint64_t version = metal->version();
  const auto result = move_to(Tensor::make(source, Layout(2)), metal);
  EXPECT_EQ(result->values(), (std::vector<Value>{Value(int64_t{4}), Value(int64_t{5})}));
  EXPECT_EQ(metal->slots(), 3);
  // The staged buffer received the slot beyond the span from the old one.
  EXPECT_EQ(metal->read(2), Value(int64_t{9}));
  EXPECT_EQ(metal->version(), version);
  EXPECT_EQ(metal->moves_received(), 1u);
}

TEST_F(MetalMove, metal_to_metal_copies_the_span_from_the_offset) {
  const Layout layout = hierarchical();
  auto source = std::make_shared<Metal>(DType::Float32(), std::nullopt, counting(15, 0));
  const auto tensor = Tensor::make(source, layout, 1);
  const std::vector<Value> expected = tensor->values();
  auto destination = std::make_shared<Metal>(DType::Float32());
  const auto result = move_to(tensor, destination);
  EXPECT_EQ(result->subtensor("test").layout, layout);
  EXPECT_EQ(result->values(), expected);
  EXPECT_EQ(all_slots(*destination), counting(13, 1));
  EXPECT_TRUE(source->is_released());
  EXPECT_EQ(source->version(), 0u);
}

TEST_F(MetalMove, a_broadcast_stays_a_layout_of_its_cosize) {
  const Layout broadcast(IntTuple::tuple({3, 4}), IntTuple::tuple({1, 0}));  // size 12, cosize 3
  auto source = std::make_shared<CPU>(DType::Float32(), std::nullopt, counting(4, 1));
  const auto tensor = Tensor::make(source, broadcast, 1);
  const std::vector<Value> expected = tensor->values();
  auto metal = std::make_shared<Metal>(DType::Float32());
  const auto on_device = move_to(tensor, metal);
  EXPECT_EQ(metal->slots(), 3);
  EXPECT_EQ(metal->buffer("test")->bytes(), 12);
  EXPECT_EQ(on_device->subtensor("test").layout, broadcast);
  EXPECT_EQ(on_device->values(), expected);
  auto other = std::make_shared<Metal>(DType::Float32());
  const auto copied = move_to(on_device, other);
  EXPECT_EQ(other->slots(), 3);
  auto back = std::make_shared<CPU>(DType::Float32());
  const auto on_host = move_to(copied, back);
  EXPECT_EQ(back->slots(), 3);
  EXPECT_EQ(on_host->subtensor("test").layout, broadcast);
  EXPECT_EQ(on_host->values(), expected);
}

TEST_F(MetalMove, a_move_of_nothing_still_completes) {
  auto source = std::make_shared<CPU>(DType::Float32(), 2);
  auto metal = std::make_shared<Metal>(DType::Float32());
  const auto result = move_to(Tensor::make(source, Layout(0)), metal);
  EXPECT_EQ(result->values(), std::vector<Value>{});
  EXPECT_EQ(metal->version(), 0u);
  EXPECT_EQ(metal->moves_received(), 1u);
  EXPECT_TRUE(source->is_released());
}

TEST_F(MetalMove, a_move_completes_after_initiate_returns) {
  for (const bool to_metal : {true, false}) {
    std::shared_ptr<Carrier> source;
    std::shared_ptr<Carrier> destination;
    if (to_metal) {
      source = std::make_shared<CPU>(DType::Float32(), std::nullopt, counting(6, 1));
      destination = std::make_shared<Metal>(DType::Float32());
    } else {
      source = std::make_shared<Metal>(DType::Float32(), std::nullopt, counting(6, 1));
      destination = std::make_shared<CPU>(DType::Float32());
    }
    device::set_emulated_latency(std::chrono::milliseconds(50));
    const auto request = MoveRequest::initiate(Tensor::make(source, Layout(3, 2)), destination);
    EXPECT_FALSE(request->completion().done());
    EXPECT_EQ(source->pinned_by(), request->name());
    EXPECT_FALSE(source->is_released());
    EXPECT_THROW(source->release(), RuntimeError);  // pinned by the move
    EXPECT_EQ(destination->pinned_by(), request->name());
    const auto result = request->completion().wait();
    device::set_emulated_latency(std::chrono::microseconds(0));
    EXPECT_EQ(result->values(), (std::vector<Value>{1.0, 3.0, 5.0}));
    EXPECT_TRUE(source->is_released());
    EXPECT_EQ(destination->pinned_by(), std::nullopt);
    EXPECT_EQ(all_slots(*destination), counting(5, 1));
  }
}

enum class Pair { kCpuToMetal, kMetalToCpu, kMetalToMetal };
const Pair kPairs[] = {Pair::kCpuToMetal, Pair::kMetalToCpu, Pair::kMetalToMetal};

const char* name_of(Pair pair) {
  switch (pair) {
    case Pair::kCpuToMetal:
      return "CPU->Metal";
    case Pair::kMetalToCpu:
      return "Metal->CPU";
    case Pair::kMetalToMetal:
      return "Metal->Metal";
  }
  return "?";
}

struct Carriers {
  std::shared_ptr<Carrier> source;
  std::shared_ptr<Carrier> destination;
};

// Sized destinations hold 8 slots valued 100, 101, ...; empty ones none.
Carriers carriers_of(Pair pair, bool sized = false) {
  const std::vector<Value> values = counting(6, 1);
  const std::optional<std::vector<Value>> held =
      sized ? std::optional(counting(8, 100)) : std::nullopt;
  const bool metal_source = pair != Pair::kCpuToMetal;
  const bool metal_destination = pair != Pair::kMetalToCpu;
  Carriers c;
  c.source =
      metal_source
          ? std::shared_ptr<Carrier>(
                std::make_shared<Metal>(DType::Float32(), std::nullopt, values))
          : std::shared_ptr<Carrier>(std::make_shared<CPU>(DType::Float32(), std::nullopt, values));
  c.destination =
      metal_destination
          ? std::shared_ptr<Carrier>(std::make_shared<Metal>(DType::Float32(), std::nullopt, held))
          : std::shared_ptr<Carrier>(std::make_shared<CPU>(DType::Float32(), std::nullopt, held));
  return c;
}

// Runs the move and expects it to fail (directly or through its completion)
// leaving the source live, unpinned, with its values and version, and the
// destination unpinned, unpublished and unchanged: its version, its slot
// count (an empty one stays empty) and its values (the move staged its value
// in storage of its own).
void expect_failed_move(Pair pair, const std::function<void()>& arm, const char* what,
                        bool sized = false) {
  SCOPED_TRACE(std::string(name_of(pair)) + ", " + what + (sized ? ", sized" : ", empty"));
  const Carriers c = carriers_of(pair, sized);
  const uint64_t source_version = c.source->version();
  const uint64_t destination_version = c.destination->version();
  const std::vector<Value> destination_values = all_slots(*c.destination);
  const auto tensor = Tensor::make(c.source, Layout(3, 2));
  arm();
  std::shared_ptr<MoveRequest> request;
  bool threw = false;
  try {
    request = MoveRequest::initiate(tensor, c.destination);
  } catch (const std::exception&) {
    threw = true;
  }
  if (!threw) {
    ASSERT_NE(request, nullptr);
    EXPECT_THROW(request->completion().wait(), std::exception);
    EXPECT_NE(request->completion().error(), nullptr);
  }
  EXPECT_EQ(device::clear_emulated_faults(), 0) << "the device fault did not fire";
  EXPECT_EQ(clear_move_faults(), 0) << "the move fault did not fire";
  EXPECT_FALSE(c.source->is_released());
  EXPECT_EQ(c.source->pinned_by(), std::nullopt);
  EXPECT_EQ(c.source->version(), source_version);
  EXPECT_TRUE(c.source->is_mutable());
  EXPECT_EQ(all_slots(*c.source), counting(6, 1));
  EXPECT_EQ(c.destination->pinned_by(), std::nullopt);
  EXPECT_FALSE(c.destination->is_released());
  EXPECT_EQ(c.destination->version(), destination_version);
  EXPECT_EQ(all_slots(*c.destination), destination_values);
  // The source moves again once the fault is gone.
  const std::shared_ptr<Carrier> again = c.destination->new_like();
  EXPECT_EQ(move_to(tensor, again)->values(), (std::vector<Value>{1.0, 3.0, 5.0}));
}

// Every device fault and every move stage, armed once each, on every pair
// into an empty or a sized destination. A Metal-to-CPU move allocates no
// device memory (its staged value is host memory).
void expect_every_fault_fails(bool sized) {
  for (const Pair pair : kPairs) {
    if (pair != Pair::kMetalToCpu) {
      expect_failed_move(
          pair,
          [] {
            device::inject_emulated_fault(device::Fault::kAllocation,
                                          std::make_exception_ptr(MemoryError("device full")));
          },
          "allocation", sized);
    }
    expect_failed_move(
        pair,
        [] {
          device::inject_emulated_fault(device::Fault::kCopy,
                                        std::make_exception_ptr(RuntimeError("copy fault")));
        },
        "copy", sized);
    expect_failed_move(
        pair,
        [] {
          device::inject_emulated_fault(device::Fault::kSynchronize,
                                        std::make_exception_ptr(RuntimeError("sync fault")));
        },
        "synchronize", sized);
    for (int stage = 0; stage < kMoveStages; ++stage) {
      expect_failed_move(
          pair,
          [stage] {
            inject_move_fault(static_cast<MoveStage>(stage),
                              std::make_exception_ptr(std::runtime_error("stage fault")));
          },
          move_stage_name(static_cast<MoveStage>(stage)), sized);
    }
  }
}

TEST_F(MetalMove, any_fault_keeps_the_source_and_an_empty_destination_empty) {
  expect_every_fault_fails(false);
}

TEST_F(MetalMove, any_fault_leaves_a_sized_destination_unchanged) {
  expect_every_fault_fails(true);
}

TEST_F(MetalMove, a_device_fault_under_latency_fails_the_completion) {
  for (const Pair pair : kPairs) {
    const Carriers c = carriers_of(pair);
    device::set_emulated_latency(std::chrono::milliseconds(10));
    device::inject_emulated_fault(device::Fault::kCopy,
                                  std::make_exception_ptr(RuntimeError("late copy fault")));
    const auto request = MoveRequest::initiate(Tensor::make(c.source, Layout(6)), c.destination);
    const std::string message = message_of<RuntimeError>([&] { request->completion().wait(); });
    EXPECT_EQ(message, "late copy fault");
    device::set_emulated_latency(std::chrono::microseconds(0));
    EXPECT_FALSE(c.source->is_released());
    EXPECT_EQ(c.source->pinned_by(), std::nullopt);
    EXPECT_EQ(all_slots(*c.source), counting(6, 1));
  }
}

TEST_F(MetalMove, lowered_transfers_run_the_metal_operations) {
  auto host = std::make_shared<CPU>(DType::Int32(), std::nullopt,
                                    std::vector<Value>{Value(int64_t{1}), Value(int64_t{2}),
                                                       Value(int64_t{3}), Value(int64_t{4})});
  auto owner = std::make_shared<CPU>(DType::Int32(), 1);
  auto metal = std::make_shared<Metal>(DType::Int32());
  owner->take_ownership(*host);
  owner->take_ownership(*metal);
  const auto up =
      lowered_operation("Test", CPU::static_class(), Metal::static_class(), DType::Int32());
  EXPECT_EQ(&up->operation_class(), &CpuToMetalMoveOperation::static_class());
  lowered_transfer(*up, "lowered #1", host, 1, 3, metal);
  EXPECT_EQ(all_slots(*metal),
            (std::vector<Value>{Value(int64_t{2}), Value(int64_t{3}), Value(int64_t{4})}));
  EXPECT_EQ(metal->version(), 1u);
  EXPECT_EQ(metal->pinned_by(), std::nullopt);
  EXPECT_FALSE(host->is_released());

  auto back = std::make_shared<CPU>(DType::Int32());
  owner->take_ownership(*back);
  const auto down =
      lowered_operation("Test", Metal::static_class(), CPU::static_class(), DType::Int32());
  EXPECT_EQ(&down->operation_class(), &MetalToCpuMoveOperation::static_class());
  device::set_emulated_latency(std::chrono::milliseconds(5));  // copy() still waits
  lowered_transfer(*down, "lowered #2", metal, 1, 2, back);
  EXPECT_EQ(all_slots(*back), (std::vector<Value>{Value(int64_t{3}), Value(int64_t{4})}));
  EXPECT_FALSE(metal->is_released());
  EXPECT_EQ(metal->version(), 1u);

  // A device fault in a lowered transfer is its exception.
  auto again = std::make_shared<CPU>(DType::Int32());
  owner->take_ownership(*again);
  device::inject_emulated_fault(device::Fault::kCopy,
                                std::make_exception_ptr(RuntimeError("lowered copy fault")));
  EXPECT_THROW(lowered_transfer(*down, "lowered #3", metal, 0, 3, again), RuntimeError);
  EXPECT_EQ(metal->pinned_by(), std::nullopt);
  EXPECT_EQ(again->pinned_by(), std::nullopt);
}

// A subclass of Metal: the exact Metal operations do not serve it.
class SubMetal final : public Metal {
 public:
  using Metal::Metal;
  static const ClassDescriptor& static_class() {
    static const ClassDescriptor& descriptor =
        *ClassDescriptor::carrier("SubMetal", &Metal::static_class(),
                                  ClassDescriptor::Definition::kOpen)
             .release();
    return descriptor;
  }
  const ClassDescriptor& carrier_class() const override { return static_class(); }
};

TEST_F(MetalMove, a_subclass_pair_is_not_served_by_the_metal_operations) {
  const LegacyMoveRegistry& registry = LegacyMoveRegistry::global();
  EXPECT_EQ(&registry.dispatch(CPU::static_class(), SubMetal::static_class()),
            &ElementwiseMoveOperation::static_class());
  EXPECT_EQ(&registry.dispatch(SubMetal::static_class(), CPU::static_class()),
            &ElementwiseMoveOperation::static_class());
  EXPECT_EQ(&registry.dispatch(SubMetal::static_class(), Metal::static_class()),
            &ElementwiseMoveOperation::static_class());
  const auto operation = CpuToMetalMoveOperation::static_class().make_operation();
  const std::string message = message_of<TypeError>(
      [&] { operation->check_pair(CPU::static_class(), SubMetal::static_class()); });
  EXPECT_NE(message.find("CpuToMetalMoveOperation"), std::string::npos) << message;

  // The elementwise fallback moves the values all the same.
  auto source = std::make_shared<CPU>(DType::Float32(), std::nullopt, counting(5, 1));
  auto sub = std::make_shared<SubMetal>(DType::Float32());
  const auto tensor = Tensor::make(source, Layout(2, 2), 1);
  const auto on_sub = move_to(tensor, sub);
  EXPECT_EQ(on_sub->values(), (std::vector<Value>{2.0, 4.0}));
  EXPECT_EQ(sub->slots(), 3);
  auto back = std::make_shared<Metal>(DType::Float32());
  EXPECT_EQ(move_to(on_sub, back)->values(), (std::vector<Value>{2.0, 4.0}));
}

// The in-place copy (lowered transfers, and a Python subclass calling the
// built-in copy) synchronizes the device before it returns: a synchronization
// fault fails the copy, and it fires during the copy, not later.
TEST_F(MetalMove, the_in_place_copy_synchronizes_the_device_before_returning) {
  for (const bool upload : {true, false}) {
    SCOPED_TRACE(upload ? "upload" : "download");
    auto cpu = std::make_shared<CPU>(DType::Float32(), std::nullopt, counting(4, 1));
    auto metal = std::make_shared<Metal>(DType::Float32(), std::nullopt, counting(4, 10));
    const std::shared_ptr<Carrier> source = upload ? std::shared_ptr<Carrier>(cpu) : metal;
    const std::shared_ptr<Carrier> destination = upload ? std::shared_ptr<Carrier>(metal) : cpu;
    const auto operation = lowered_operation("Test", source->carrier_class(),
                                             destination->carrier_class(), DType::Float32());
    device::inject_emulated_fault(device::Fault::kSynchronize,
                                  std::make_exception_ptr(RuntimeError("synchronize failed")));
    const std::string message = message_of<RuntimeError>(
        [&] { lowered_transfer(*operation, "lowered #sync", source, 0, 4, destination); });
    EXPECT_NE(message.find("synchronize failed"), std::string::npos) << message;
    EXPECT_EQ(device::clear_emulated_faults(), 0) << "the copy returned without synchronizing";
    EXPECT_FALSE(source->pinned_by().has_value());
    EXPECT_FALSE(destination->pinned_by().has_value());
  }
}

}  // namespace
}  // namespace strideweave
