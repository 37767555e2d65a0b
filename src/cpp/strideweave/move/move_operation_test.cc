#include "strideweave/move/move_operation.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/util/error.h"
#include "testing/expect_error.h"

namespace strideweave {
namespace {

using testing_util::message_of;

// A move operation whose exact class is `exact`, as the binding's trampoline
// reports a Python subclass's descriptor.
class Described : public MoveOperation {
 public:
  explicit Described(const ClassDescriptor& exact) : exact_(exact) {}
  const ClassDescriptor& operation_class() const override { return exact_; }

 private:
  const ClassDescriptor& exact_;
};

TEST(MoveOperation, builtin_descriptors_form_one_hierarchy) {
  const ClassDescriptor& root = MoveOperation::static_class();
  EXPECT_EQ(root.name(), "MoveOperation");
  EXPECT_EQ(root.parent(), nullptr);
  EXPECT_EQ(root.kind(), DescriptorKind::kMoveOperation);
  const auto builtins = builtin_move_operation_classes();
  ASSERT_EQ(builtins.size(), 4u);
  EXPECT_EQ(builtins[0], &root);
  for (const ClassDescriptor* builtin : builtins.subspan(1)) {
    EXPECT_EQ(builtin->parent(), &root) << builtin->name();
    EXPECT_EQ(builtin->kind(), DescriptorKind::kMoveOperation) << builtin->name();
  }
  EXPECT_EQ(ElementwiseMoveOperation::static_class().name(), "ElementwiseMoveOperation");
  EXPECT_EQ(CpuToFileBackedMoveOperation::static_class().name(), "CpuToFileBackedMoveOperation");
  EXPECT_EQ(FileBackedToCpuMoveOperation::static_class().name(), "FileBackedToCpuMoveOperation");
  // Created once: every call names the same descriptor.
  EXPECT_EQ(&ElementwiseMoveOperation::static_class(), builtins[1]);
}

TEST(MoveOperation, builtins_pin_their_pairs) {
  EXPECT_EQ(MoveOperation::static_class().pinned_source(), nullptr);
  EXPECT_EQ(MoveOperation::static_class().pinned_destination(), nullptr);
  EXPECT_EQ(ElementwiseMoveOperation::static_class().pinned_source(), nullptr);
  EXPECT_EQ(ElementwiseMoveOperation::static_class().pinned_destination(), nullptr);
  EXPECT_EQ(CpuToFileBackedMoveOperation::static_class().pinned_source(), &CPU::static_class());
  EXPECT_EQ(CpuToFileBackedMoveOperation::static_class().pinned_destination(),
            &FileBacked::static_class());
  EXPECT_EQ(FileBackedToCpuMoveOperation::static_class().pinned_source(),
            &FileBacked::static_class());
  EXPECT_EQ(FileBackedToCpuMoveOperation::static_class().pinned_destination(),
            &CPU::static_class());
}

TEST(MoveOperation, instances_report_their_exact_class) {
  EXPECT_EQ(&MoveOperation().operation_class(), &MoveOperation::static_class());
  EXPECT_EQ(&ElementwiseMoveOperation().operation_class(),
            &ElementwiseMoveOperation::static_class());
  EXPECT_EQ(&CpuToFileBackedMoveOperation().operation_class(),
            &CpuToFileBackedMoveOperation::static_class());
  EXPECT_EQ(&FileBackedToCpuMoveOperation().operation_class(),
            &FileBackedToCpuMoveOperation::static_class());
}

TEST(MoveOperation, an_unpinned_operation_accepts_any_pair) {
  const auto sub_cpu =
      ClassDescriptor::carrier("SubCPU", &CPU::static_class(), ClassDescriptor::Definition::kOpen);
  const ElementwiseMoveOperation elementwise;
  for (const ClassDescriptor* source :
       {&CPU::static_class(), &Generic::static_class(), &FileBacked::static_class(),
        static_cast<const ClassDescriptor*>(sub_cpu.get())}) {
    for (const ClassDescriptor* destination :
         {&CPU::static_class(), &Generic::static_class(), &FileBacked::static_class(),
          static_cast<const ClassDescriptor*>(sub_cpu.get())}) {
      EXPECT_NO_THROW(elementwise.check_pair(*source, *destination));
      EXPECT_NO_THROW(MoveOperation().check_pair(*source, *destination));
    }
  }
}

TEST(MoveOperation, a_pinned_operation_accepts_its_exact_pair_alone) {
  const CpuToFileBackedMoveOperation to_file;
  const ClassDescriptor& cpu = CPU::static_class();
  const ClassDescriptor& file = FileBacked::static_class();
  EXPECT_NO_THROW(to_file.check_pair(cpu, file));
  const std::string source =
      message_of<TypeError>([&] { to_file.check_pair(Generic::static_class(), file); });
  EXPECT_NE(source.find("CpuToFileBackedMoveOperation"), std::string::npos) << source;
  EXPECT_NE(source.find("source carrier of exact class CPU, not Generic"), std::string::npos)
      << source;
  const std::string destination = message_of<TypeError>([&] { to_file.check_pair(cpu, cpu); });
  EXPECT_NE(destination.find("destination carrier of exact class FileBacked, not CPU"),
            std::string::npos)
      << destination;
  // A subclass of the pinned class is a different exact class.
  const auto sub_cpu = ClassDescriptor::carrier("SubCPU", &cpu, ClassDescriptor::Definition::kOpen);
  const std::string sub = message_of<TypeError>([&] { to_file.check_pair(*sub_cpu, file); });
  EXPECT_NE(sub.find("exact class CPU, not SubCPU"), std::string::npos) << sub;
  // The source side is checked first.
  const std::string both = message_of<TypeError>([&] { to_file.check_pair(file, cpu); });
  EXPECT_NE(both.find("source carrier"), std::string::npos) << both;
}

TEST(MoveOperation, one_pinned_side_leaves_the_other_open) {
  const auto source_only = ClassDescriptor::move_operation(
      "FromCPU", &MoveOperation::static_class(), &CPU::static_class(), nullptr);
  const Described op(*source_only);
  EXPECT_NO_THROW(op.check_pair(CPU::static_class(), Generic::static_class()));
  EXPECT_NO_THROW(op.check_pair(CPU::static_class(), FileBacked::static_class()));
  const std::string message = message_of<TypeError>(
      [&] { op.check_pair(FileBacked::static_class(), CPU::static_class()); });
  EXPECT_NE(message.find("the move operation FromCPU requires a source carrier of exact class "
                         "CPU, not FileBacked"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace strideweave
