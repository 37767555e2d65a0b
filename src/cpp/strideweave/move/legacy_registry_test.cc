#include "strideweave/move/legacy_registry.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/util/error.h"

namespace strideweave {
namespace {

using Definition = ClassDescriptor::Definition;

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type";
  return {};
}

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

}  // namespace
}  // namespace strideweave
