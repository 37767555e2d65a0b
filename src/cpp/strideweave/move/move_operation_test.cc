#include "strideweave/move/move_operation.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "strideweave/carrier/block_device.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/exec/core_mutex.h"
#include "strideweave/move/builtins.h"
#include "strideweave/move/metal_move_operation.h"
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
  ASSERT_EQ(builtins.size(), 9u);
  EXPECT_EQ(builtins[0], &root);
  for (const ClassDescriptor* builtin : builtins.subspan(1)) {
    EXPECT_EQ(builtin->parent(), &root) << builtin->name();
    EXPECT_EQ(builtin->kind(), DescriptorKind::kMoveOperation) << builtin->name();
  }
  EXPECT_EQ(ElementwiseMoveOperation::static_class().name(), "ElementwiseMoveOperation");
  EXPECT_EQ(CpuToFileBackedMoveOperation::static_class().name(), "CpuToFileBackedMoveOperation");
  EXPECT_EQ(FileBackedToCpuMoveOperation::static_class().name(), "FileBackedToCpuMoveOperation");
  EXPECT_EQ(CpuToBlockDeviceMoveOperation::static_class().name(), "CpuToBlockDeviceMoveOperation");
  EXPECT_EQ(BlockDeviceToCpuMoveOperation::static_class().name(), "BlockDeviceToCpuMoveOperation");
  EXPECT_EQ(CpuToMetalMoveOperation::static_class().name(), "CpuToMetalMoveOperation");
  EXPECT_EQ(MetalToCpuMoveOperation::static_class().name(), "MetalToCpuMoveOperation");
  EXPECT_EQ(MetalToMetalMoveOperation::static_class().name(), "MetalToMetalMoveOperation");
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
  EXPECT_EQ(CpuToBlockDeviceMoveOperation::static_class().pinned_source(), &CPU::static_class());
  EXPECT_EQ(CpuToBlockDeviceMoveOperation::static_class().pinned_destination(),
            &BlockDeviceCarrier::static_class());
  EXPECT_EQ(BlockDeviceToCpuMoveOperation::static_class().pinned_source(),
            &BlockDeviceCarrier::static_class());
  EXPECT_EQ(BlockDeviceToCpuMoveOperation::static_class().pinned_destination(),
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
  EXPECT_EQ(&CpuToBlockDeviceMoveOperation().operation_class(),
            &CpuToBlockDeviceMoveOperation::static_class());
  EXPECT_EQ(&BlockDeviceToCpuMoveOperation().operation_class(),
            &BlockDeviceToCpuMoveOperation::static_class());
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

TEST(MoveOperation, one_table_names_the_builtins_and_each_class_makes_its_instances) {
  for (const ClassDescriptor* builtin : builtin_move_operation_classes().subspan(1)) {
    const std::shared_ptr<MoveOperation> made = builtin->make_operation();
    ASSERT_NE(made, nullptr) << builtin->name();
    EXPECT_EQ(&made->operation_class(), builtin);
    EXPECT_NE(builtin->make_operation(), made);  // a new instance per call
  }
  // The root makes an instance whose copy hook is abstract.
  const std::shared_ptr<MoveOperation> root = MoveOperation::static_class().make_operation();
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(&root->operation_class(), &MoveOperation::static_class());
  EXPECT_THROW(root->copy(MoveTransfer{}), NotImplementedError);
  // A class created without a maker (and a carrier class) makes nothing.
  const auto foreign = ClassDescriptor::move_operation(
      "ElementwiseMoveOperation", &ElementwiseMoveOperation::static_class(), nullptr, nullptr);
  EXPECT_NE(message_of<TypeError>([&] {
              foreign->make_operation();
            }).find("the move operation class ElementwiseMoveOperation makes no move operation"),
            std::string::npos);
  EXPECT_THROW(CPU::static_class().make_operation(), TypeError);
}

std::vector<Value> ints(std::initializer_list<int64_t> xs) {
  return std::vector<Value>(xs.begin(), xs.end());
}

// A transfer of `tensor` into `destination` (at least cosize slots), with
// both carriers pinned as a move pins them; the leases end with the object.
struct PinnedTransfer {
  PinnedTransfer(std::shared_ptr<const Tensor> tensor, std::shared_ptr<Carrier> destination)
      : source_lease(tensor->subtensor("test").carrier->pin("test move")),
        destination_lease(destination->pin("test move")) {
    const Subtensor& source = tensor->subtensor("test");
    transfer = MoveTransfer{.tensor = tensor,
                            .source = source.carrier,
                            .destination = destination,
                            .offset = source.offset,
                            .element_count = source.layout.cosize(),
                            .source_lease = &source_lease,
                            .destination_lease = &destination_lease,
                            .output = Tensor::make(destination, source.layout, 0)};
  }
  Lease source_lease;
  Lease destination_lease;
  MoveTransfer transfer;
};

TEST(MoveOperation, the_elementwise_copy_writes_host_memory_in_place) {
  // (3,2):(3,1) at offset 1: a transposed view with a hole at slot 2 of the window.
  auto source =
      std::make_shared<CPU>(DType::Int32(), std::nullopt, ints({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const Layout layout(IntTuple::tuple({3, 2}), IntTuple::tuple({3, 1}));
  const auto tensor = Tensor::make(source, layout, 1);
  auto destination =
      std::make_shared<CPU>(DType::Int32(), std::nullopt, ints({-1, -1, -1, -1, -1, -1, -1, -1}));
  std::byte* buffer = destination->data();
  {
    PinnedTransfer pinned(tensor, destination);
    ElementwiseMoveOperation().copy(pinned.transfer);
    EXPECT_EQ(core_locks_held(), 0);  // both carriers' locks released
    EXPECT_EQ(destination->pinned_by(), "test move");
    EXPECT_EQ(destination->version(), 0u);  // counted when the pin ends
    EXPECT_EQ(pinned.transfer.output->values(), tensor->values());
  }
  EXPECT_EQ(destination->version(), 1u);
  EXPECT_EQ(source->version(), 0u);
  EXPECT_EQ(destination->data(), buffer);
  // Slots 0, 1, 3, 4, 6, 7 are reached; the holes 2 and 5 keep their prior values.
  EXPECT_EQ(destination->read_range_values(0, 8), ints({1, 2, -1, 4, 5, -1, 7, 8}));
}

TEST(MoveOperation, the_file_routes_copy_the_span_straight_to_and_from_the_cpu_buffer) {
  auto cpu = std::make_shared<CPU>(DType::Int32(), std::nullopt, ints({0, 1, 2, 3, 4, 5}));
  const Layout every_other(IntTuple::tuple({2}), IntTuple::tuple({2}));
  auto file = std::make_shared<FileBacked>(DType::Int32(), 3);
  {
    PinnedTransfer pinned(Tensor::make(cpu, every_other, 2), file);
    CpuToFileBackedMoveOperation().copy(pinned.transfer);
    EXPECT_EQ(core_locks_held(), 0);
  }
  EXPECT_EQ(file->read_range_values(0, 3), ints({2, 3, 4}));  // the hole too
  EXPECT_EQ(file->version(), 1u);
  auto back = std::make_shared<CPU>(DType::Int32(), std::nullopt, ints({-1, -1, -1, -1}));
  std::byte* buffer = back->data();
  {
    PinnedTransfer pinned(Tensor::make(file, Layout(IntTuple(2)), 1), back);
    FileBackedToCpuMoveOperation().copy(pinned.transfer);
    EXPECT_EQ(core_locks_held(), 0);
  }
  EXPECT_EQ(back->read_range_values(0, 4), ints({3, 4, -1, -1}));
  EXPECT_EQ(back->version(), 1u);
  EXPECT_EQ(back->data(), buffer);
  EXPECT_EQ(file->version(), 1u);
}

TEST(MoveOperation, a_failed_direct_read_leaves_no_lock_held) {
  auto file = std::make_shared<FileBacked>(DType::Int32(), 4);
  auto cpu = std::make_shared<CPU>(DType::Int32(), 4);
  {
    PinnedTransfer pinned(Tensor::make(file, Layout(IntTuple(4))), cpu);
    std::filesystem::resize_file(file->path(), 8);  // shortened outside StrideWeave
    const std::string m =
        message_of<RuntimeError>([&] { FileBackedToCpuMoveOperation().copy(pinned.transfer); });
    EXPECT_NE(m.find("shortened outside StrideWeave"), std::string::npos) << m;
    EXPECT_EQ(core_locks_held(), 0);
  }
  EXPECT_EQ(cpu->version(), 1u);  // it may have been written: its slots are unspecified
  EXPECT_EQ(cpu->pinned_by(), std::nullopt);
  EXPECT_EQ(file->version(), 0u);
}

TEST(MoveOperation, abstract_dtypes_move_as_element_values) {
  auto source = std::make_shared<Generic>(DType::Any(), std::nullopt,
                                          std::vector<Value>{int64_t{1}, 2.5, true, int64_t{4}});
  const auto tensor =
      Tensor::make(source, Layout(IntTuple::tuple({2, 2}), IntTuple::tuple({2, 1})));
  auto destination = std::make_shared<Generic>(DType::Any(), 4);
  {
    PinnedTransfer pinned(tensor, destination);
    ElementwiseMoveOperation().copy(pinned.transfer);
    EXPECT_EQ(pinned.transfer.output->values(), tensor->values());
  }
  EXPECT_EQ(destination->read_range_values(0, 4), source->read_range_values(0, 4));
  EXPECT_EQ(destination->version(), 1u);
}

}  // namespace
}  // namespace strideweave
