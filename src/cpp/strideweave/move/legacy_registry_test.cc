#include "strideweave/move/legacy_registry.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "strideweave/carrier/block_device.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/move/carrier_definition.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using Definition = ClassDescriptor::Definition;

using testing_util::message_of;

struct Classes {
  std::unique_ptr<ClassDescriptor> root =
      ClassDescriptor::move_operation("MoveOperation", nullptr, nullptr, nullptr);
  std::unique_ptr<ClassDescriptor> op =
      ClassDescriptor::move_operation("CustomMove", root.get(), nullptr, nullptr);
  std::unique_ptr<ClassDescriptor> other =
      ClassDescriptor::move_operation("OtherMove", root.get(), nullptr, nullptr);
  std::unique_ptr<ClassDescriptor> sub_cpu =
      ClassDescriptor::carrier("SubCPU", &CPU::static_class(), Definition::kOpen);
};

TEST(LegacyMoveRegistry, an_entry_serves_its_exact_pair_alone) {
  Classes k;
  LegacyMoveRegistry registry;
  const ClassDescriptor& cpu = CPU::static_class();
  const ClassDescriptor& generic = Generic::static_class();
  registry.add(cpu, generic, *k.op);
  EXPECT_EQ(registry.find(cpu, generic), k.op.get());
  EXPECT_EQ(registry.find(generic, cpu), nullptr);
  EXPECT_EQ(registry.find(*k.sub_cpu, generic), nullptr);
  EXPECT_EQ(registry.find(cpu, cpu), nullptr);
  // Observing the subclass sealed it definition-free.
  EXPECT_EQ(k.sub_cpu->definition_state(), Definition::kFree);
}

TEST(LegacyMoveRegistry, a_duplicate_is_refused_and_the_entry_kept) {
  Classes k;
  LegacyMoveRegistry registry;
  const ClassDescriptor& cpu = CPU::static_class();
  const ClassDescriptor& generic = Generic::static_class();
  registry.add(cpu, generic, *k.op);
  const std::string message = message_of<ValueError>([&] { registry.add(cpu, generic, *k.other); });
  EXPECT_NE(message.find("(CPU, Generic)"), std::string::npos) << message;
  EXPECT_EQ(registry.find(cpu, generic), k.op.get());
}

TEST(LegacyMoveRegistry, remove_returns_the_class_then_refuses) {
  Classes k;
  LegacyMoveRegistry registry;
  const ClassDescriptor& cpu = CPU::static_class();
  const ClassDescriptor& generic = Generic::static_class();
  registry.add(cpu, generic, *k.op);
  EXPECT_EQ(&registry.remove(cpu, generic), k.op.get());
  EXPECT_EQ(registry.find(cpu, generic), nullptr);
  const std::string message = message_of<KeyError>([&] { registry.remove(cpu, generic); });
  EXPECT_NE(message.find("(CPU, Generic)"), std::string::npos) << message;
  EXPECT_THROW(registry.remove(*k.sub_cpu, generic), KeyError);
}

TEST(LegacyMoveRegistry, arguments_of_the_wrong_kind_are_refused_by_role) {
  Classes k;
  LegacyMoveRegistry registry;
  const ClassDescriptor& cpu = CPU::static_class();
  const std::string source = message_of<TypeError>([&] { registry.add(*k.op, cpu, *k.op); });
  EXPECT_NE(source.find("source_class CustomMove"), std::string::npos) << source;
  const std::string destination = message_of<TypeError>([&] { registry.find(cpu, *k.other); });
  EXPECT_NE(destination.find("destination_class OtherMove"), std::string::npos) << destination;
  const std::string operation = message_of<TypeError>([&] { registry.add(cpu, cpu, cpu); });
  EXPECT_NE(operation.find("operation_class CPU"), std::string::npos) << operation;
  EXPECT_EQ(registry.find(cpu, cpu), nullptr);
}

TEST(LegacyMoveRegistry, the_operation_class_is_checked_before_the_pair_is_looked_up) {
  Classes k;
  LegacyMoveRegistry registry;
  const ClassDescriptor& cpu = CPU::static_class();
  const ClassDescriptor& generic = Generic::static_class();
  registry.add(cpu, generic, *k.op);
  // A wrong operation kind is a TypeError even for a pair that has an entry.
  const std::string message = message_of<TypeError>([&] { registry.add(cpu, generic, cpu); });
  EXPECT_NE(message.find("operation_class CPU"), std::string::npos) << message;
  EXPECT_EQ(registry.find(cpu, generic), k.op.get());
}

TEST(LegacyMoveRegistry, check_add_runs_the_checks_and_records_nothing) {
  Classes k;
  LegacyMoveRegistry registry;
  const ClassDescriptor& cpu = CPU::static_class();
  const ClassDescriptor& generic = Generic::static_class();
  registry.check_add(cpu, generic, *k.op);
  EXPECT_EQ(registry.find(cpu, generic), nullptr);
  registry.check_add(*k.sub_cpu, generic, *k.op);
  EXPECT_EQ(k.sub_cpu->definition_state(), Definition::kFree);
  registry.add(cpu, generic, *k.op);
  const std::string duplicate =
      message_of<ValueError>([&] { registry.check_add(cpu, generic, *k.other); });
  EXPECT_NE(duplicate.find("(CPU, Generic)"), std::string::npos) << duplicate;
  EXPECT_THROW(registry.check_add(cpu, *k.op, *k.other), TypeError);
  EXPECT_THROW(registry.check_add(cpu, cpu, cpu), TypeError);
  EXPECT_EQ(registry.find(cpu, generic), k.op.get());
}

TEST(LegacyMoveRegistry, dispatch_falls_back_to_elementwise) {
  Classes k;
  LegacyMoveRegistry registry;
  const ClassDescriptor& cpu = CPU::static_class();
  const ClassDescriptor& generic = Generic::static_class();
  EXPECT_EQ(&registry.dispatch(cpu, generic), &ElementwiseMoveOperation::static_class());
  registry.add(cpu, generic, *k.op);
  EXPECT_EQ(&registry.dispatch(cpu, generic), k.op.get());
  EXPECT_EQ(&registry.dispatch(*k.sub_cpu, generic), &ElementwiseMoveOperation::static_class());
}

// The process-global registry holds the built-in entries before its first
// caller; every other pair, (CPU, CPU) included, falls back to elementwise.
TEST(interop_movement__move_registration_is_explicit_validated_and_process_global, clause14) {
  const LegacyMoveRegistry& global = LegacyMoveRegistry::global();
  const ClassDescriptor& cpu = CPU::static_class();
  const ClassDescriptor& file = FileBacked::static_class();
  EXPECT_EQ(global.find(cpu, file), &CpuToFileBackedMoveOperation::static_class());
  EXPECT_EQ(global.find(file, cpu), &FileBackedToCpuMoveOperation::static_class());
  const ClassDescriptor& block = BlockDeviceCarrier::static_class();
  EXPECT_EQ(global.find(cpu, block), &CpuToBlockDeviceMoveOperation::static_class());
  EXPECT_EQ(global.find(block, cpu), &BlockDeviceToCpuMoveOperation::static_class());
  EXPECT_EQ(&LegacyMoveRegistry::global(), &global);
}

TEST(interop_movement__move_registration_is_explicit_validated_and_process_global, clause15) {
  const LegacyMoveRegistry& global = LegacyMoveRegistry::global();
  const ClassDescriptor& elementwise = ElementwiseMoveOperation::static_class();
  const ClassDescriptor* classes[] = {&CPU::static_class(), &Generic::static_class(),
                                      &FileBacked::static_class(),
                                      &BlockDeviceCarrier::static_class()};
  for (const ClassDescriptor* source : classes) {
    for (const ClassDescriptor* destination : classes) {
      const bool stored = source == classes[2] || source == classes[3] ||
                          destination == classes[2] || destination == classes[3];
      const bool builtin =
          stored && (source == &CPU::static_class() || destination == &CPU::static_class());
      if (!builtin) {
        EXPECT_EQ(&global.dispatch(*source, *destination), &elementwise)
            << source->name() << " -> " << destination->name();
      }
    }
  }
}

TEST(LegacyMoveRegistry, a_definition_backed_class_is_refused_toward_transfer_routes) {
  LegacyMoveRegistry registry;
  const auto defined = ClassDescriptor::carrier("Defined", &CPU::static_class(), Definition::kOpen);
  defined->define(
      std::make_shared<const CarrierDefinition>(*defined, std::vector<TransferRoute>{}, false));
  const auto op =
      ClassDescriptor::move_operation("Op", &MoveOperation::static_class(), nullptr, nullptr);
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { registry.add(*defined, CPU::static_class(), *op); },
           [&] { registry.add(CPU::static_class(), *defined, *op); },
           [&] { registry.remove(*defined, CPU::static_class()); },
           [&] { registry.dispatch(CPU::static_class(), *defined); }}) {
    const std::string m = message_of<RuntimeError>(call);
    EXPECT_NE(m.find("Defined has a CarrierDefinition"), std::string::npos) << m;
    EXPECT_NE(m.find("TransferRoute"), std::string::npos) << m;
  }
  EXPECT_EQ(defined->definition_state(), Definition::kBacked);
}

}  // namespace
}  // namespace strideweave
