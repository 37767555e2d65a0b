#include "strideweave/move/builtins.h"

#include <vector>

#include "strideweave/move/metal_move_operation.h"
#include "strideweave/move/move_operation.h"

namespace strideweave {

namespace {

// The static descriptors of the built-in classes, the root first.
constexpr const ClassDescriptor& (*kBuiltinOperations[])() = {
    &MoveOperation::static_class,
    &ElementwiseMoveOperation::static_class,
    &CpuToFileBackedMoveOperation::static_class,
    &FileBackedToCpuMoveOperation::static_class,
    &CpuToBlockDeviceMoveOperation::static_class,
    &BlockDeviceToCpuMoveOperation::static_class,
    &CpuToMetalMoveOperation::static_class,
    &MetalToCpuMoveOperation::static_class,
    &MetalToMetalMoveOperation::static_class,
};

}  // namespace

std::span<const ClassDescriptor* const> builtin_move_operation_classes() {
  static const std::vector<const ClassDescriptor*> classes = [] {
    std::vector<const ClassDescriptor*> out;
    for (const auto& operation_class : kBuiltinOperations) out.push_back(&operation_class());
    return out;
  }();
  return classes;
}

}  // namespace strideweave
