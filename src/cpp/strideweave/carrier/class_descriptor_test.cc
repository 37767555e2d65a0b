#include "strideweave/carrier/class_descriptor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "strideweave/carrier/builtins.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/util/error.h"

namespace strideweave {
namespace {

using Definition = ClassDescriptor::Definition;

TEST(carrier_storage__every_carrier_class_has_an_exact_runtime_class_descriptor,
     clause5__builtins_are_static_and_sealed_definition_free) {
  const auto builtins = builtin_carrier_classes();
  ASSERT_GE(builtins.size(), 3u);
  EXPECT_EQ(builtins[0], &Carrier::static_class());
  for (const ClassDescriptor* builtin : builtins) {
    EXPECT_EQ(builtin->kind(), DescriptorKind::kCarrier) << builtin->name();
    EXPECT_EQ(builtin->definition_state(), Definition::kFree) << builtin->name();
    EXPECT_EQ(builtin->definition(), nullptr);
    EXPECT_TRUE(builtin->is_subclass_of(Carrier::static_class())) << builtin->name();
  }
  EXPECT_NE(std::find(builtins.begin(), builtins.end(), &CPU::static_class()), builtins.end());
  EXPECT_NE(std::find(builtins.begin(), builtins.end(), &Generic::static_class()), builtins.end());
  EXPECT_EQ(&CPU(DType::Float32(), 1).carrier_class(), &CPU::static_class());
}

TEST(carrier_storage__every_carrier_class_has_an_exact_runtime_class_descriptor,
     clause4__a_subclass_starts_open_and_seals_once) {
  const auto sub = ClassDescriptor::carrier("Sub", &CPU::static_class(), Definition::kOpen);
  EXPECT_EQ(sub->definition_state(), Definition::kOpen);
  EXPECT_TRUE(sub->is_subclass_of(CPU::static_class()));
  EXPECT_FALSE(CPU::static_class().is_subclass_of(*sub));
  // Racing first dispatches all observe the one sealed state.
  std::vector<std::thread> threads;
  std::vector<Definition> seen(8);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = sub->seal(); });
  }
  for (std::thread& t : threads) t.join();
  for (Definition d : seen) EXPECT_EQ(d, Definition::kFree);
  EXPECT_EQ(sub->seal(), Definition::kFree);
  EXPECT_EQ(CPU::static_class().seal(), Definition::kFree);
}

TEST(carrier_storage__every_carrier_class_has_an_exact_runtime_class_descriptor,
     clause4__move_operation_descriptors_pin_carrier_classes) {
  const auto root = ClassDescriptor::move_operation("MoveOperation", nullptr, nullptr, nullptr);
  EXPECT_EQ(root->kind(), DescriptorKind::kMoveOperation);
  EXPECT_EQ(root->pinned_source(), nullptr);
  const auto pinned =
      ClassDescriptor::move_operation("CpuOnly", root.get(), &CPU::static_class(), nullptr);
  EXPECT_EQ(pinned->pinned_source(), &CPU::static_class());
  EXPECT_EQ(pinned->pinned_destination(), nullptr);
  EXPECT_TRUE(pinned->is_subclass_of(*root));
  EXPECT_FALSE(pinned->is_subclass_of(Carrier::static_class()));
  EXPECT_EQ(CPU::static_class().pinned_source(), nullptr);
}

TEST(carrier_storage__every_carrier_class_has_an_exact_runtime_class_descriptor,
     clause4__kinds_do_not_mix) {
  const auto op = ClassDescriptor::move_operation("Op", nullptr, nullptr, nullptr);
  EXPECT_THROW(ClassDescriptor::carrier("Bad", op.get(), Definition::kOpen), ValueError);
  EXPECT_THROW(ClassDescriptor::move_operation("Bad", &CPU::static_class(), nullptr, nullptr),
               ValueError);
  EXPECT_THROW(ClassDescriptor::move_operation("Bad", op.get(), op.get(), nullptr), ValueError);
  EXPECT_THROW(ClassDescriptor::carrier("Bad", &CPU::static_class(), Definition::kBacked),
               ValueError);
  try {
    ClassDescriptor::move_operation("Bad", op.get(), nullptr, op.get());
    ADD_FAILURE() << "pinning a move operation class as a carrier class was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("move operation class Op"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strideweave
