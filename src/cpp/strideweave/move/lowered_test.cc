#include "strideweave/move/lowered.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/move/carrier_definition.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

std::shared_ptr<CPU> cpu_of(std::vector<Value> values) {
  return std::make_shared<CPU>(DType::Int32(), std::nullopt, std::move(values));
}

std::vector<Value> values_of(const Carrier& carrier) {
  return carrier.read_range_values(0, carrier.slots());
}

std::vector<Value> ints(std::initializer_list<int32_t> items) {
  std::vector<Value> out;
  for (int32_t v : items) out.emplace_back(v);
  return out;
}

TEST(LoweredTransfer, uses_the_registered_operation_of_the_exact_pair) {
  const auto operation =
      lowered_operation("Test", CPU::static_class(), FileBacked::static_class(), DType::Int32());
  EXPECT_EQ(&operation->operation_class(), &CpuToFileBackedMoveOperation::static_class());
  const auto fallback =
      lowered_operation("Test", CPU::static_class(), Generic::static_class(), DType::Int32());
  EXPECT_EQ(&fallback->operation_class(), &ElementwiseMoveOperation::static_class());
}

TEST(carrier_composition__composites_move_values_between_their_parts_through_lowered_transfers,
     transfer_between_owned_parts_through_the_registered_operation) {
  const auto owner = cpu_of(ints({0}));
  const auto source = cpu_of(ints({1, 2, 3, 4, 5}));
  const auto destination = std::make_shared<FileBacked>(DType::Int32());
  owner->take_ownership(*source);
  owner->take_ownership(*destination);
  const uint64_t source_version = source->version();
  const uint64_t destination_version = destination->version();
  const auto operation =
      lowered_operation("Test", CPU::static_class(), FileBacked::static_class(), DType::Int32());
  lowered_transfer(*operation, "lowered #1", source, 1, 3, destination);
  EXPECT_EQ(values_of(*destination), ints({2, 3, 4}));
  EXPECT_EQ(source->version(), source_version);
  EXPECT_EQ(destination->version(), destination_version + 1);
  EXPECT_FALSE(source->pinned_by().has_value());
  EXPECT_FALSE(destination->pinned_by().has_value());
  EXPECT_FALSE(source->is_released());
  EXPECT_EQ(destination->owner(), owner);
}

TEST(carrier_composition__composites_move_values_between_their_parts_through_lowered_transfers,
     refuse_a_definition_backed_part) {
  const auto backed = ClassDescriptor::carrier("LoweredBacked", &CPU::static_class(),
                                               ClassDescriptor::Definition::kOpen);
  backed->define(std::make_shared<CarrierDefinition>(*backed, std::vector<TransferRoute>{}, true));
  const std::string m = message_of<TypeError>(
      [&] { lowered_operation("Evictable", *backed, CPU::static_class(), DType::Int32()); });
  EXPECT_NE(m.find("Evictable"), std::string::npos) << m;
  EXPECT_NE(m.find("LoweredBacked"), std::string::npos) << m;
}

TEST(LoweredTransfer, a_small_destination_is_refused_before_any_pin) {
  const auto source = cpu_of(ints({1, 2, 3}));
  const auto destination = cpu_of(ints({9, 9}));
  const auto operation =
      lowered_operation("Test", CPU::static_class(), CPU::static_class(), DType::Int32());
  const uint64_t version = destination->version();
  const std::string m = message_of<ValueError>(
      [&] { lowered_transfer(*operation, "lowered #2", source, 0, 3, destination); });
  EXPECT_NE(m.find(destination->label()), std::string::npos) << m;
  EXPECT_EQ(values_of(*destination), ints({9, 9}));
  EXPECT_EQ(destination->version(), version);
  EXPECT_FALSE(destination->pinned_by().has_value());
}

TEST(carrier_composition__composites_move_values_between_their_parts_through_lowered_transfers,
     fail_a_lowered_transfer_by_an_injected_fault) {
  const auto source = cpu_of(ints({1, 2, 3}));
  const auto destination = std::make_shared<FileBacked>(DType::Int32());
  const auto operation =
      lowered_operation("Test", CPU::static_class(), FileBacked::static_class(), DType::Int32());
  const uint64_t version = source->version();
  inject_move_fault(MoveStage::kCopy,
                    std::make_exception_ptr(OSError(5, "tier", "injected tier failure")));
  const std::string m = message_of<OSError>(
      [&] { lowered_transfer(*operation, "lowered #3", source, 0, 3, destination); });
  EXPECT_NE(m.find("injected tier failure"), std::string::npos) << m;
  EXPECT_EQ(clear_move_faults(), 0);
  EXPECT_EQ(values_of(*source), ints({1, 2, 3}));
  EXPECT_EQ(source->version(), version);
  EXPECT_FALSE(source->pinned_by().has_value());
  EXPECT_FALSE(destination->pinned_by().has_value());
  lowered_transfer(*operation, "lowered #4", source, 0, 3, destination);
  EXPECT_EQ(values_of(*destination), ints({1, 2, 3}));
}

}  // namespace
}  // namespace strideweave
