#include "strideweave/move/move_operation.h"

#include <string>
#include <tuple>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

// A built-in's static descriptor: created once, never destroyed.
const ClassDescriptor& builtin_operation_class(std::string name, const ClassDescriptor* parent,
                                               const ClassDescriptor* source,
                                               const ClassDescriptor* destination) {
  return *ClassDescriptor::move_operation(std::move(name), parent, source, destination).release();
}

}  // namespace

MoveOperation::~MoveOperation() = default;

const ClassDescriptor& MoveOperation::static_class() {
  static const ClassDescriptor& descriptor =
      builtin_operation_class("MoveOperation", nullptr, nullptr, nullptr);
  return descriptor;
}

void MoveOperation::check_pair(const ClassDescriptor& source_class,
                               const ClassDescriptor& destination_class) const {
  const ClassDescriptor& operation = operation_class();
  for (const auto& [side, pinned, given] :
       {std::tuple{"source", operation.pinned_source(), &source_class},
        std::tuple{"destination", operation.pinned_destination(), &destination_class}}) {
    if (pinned != nullptr && pinned != given) {
      throw TypeError("the move operation " + operation.name() + " requires a " + side +
                      " carrier of exact class " + pinned->name() + ", not " + given->name());
    }
  }
}

const ClassDescriptor& ElementwiseMoveOperation::static_class() {
  static const ClassDescriptor& descriptor = builtin_operation_class(
      "ElementwiseMoveOperation", &MoveOperation::static_class(), nullptr, nullptr);
  return descriptor;
}

const ClassDescriptor& CpuToFileBackedMoveOperation::static_class() {
  static const ClassDescriptor& descriptor =
      builtin_operation_class("CpuToFileBackedMoveOperation", &MoveOperation::static_class(),
                              &CPU::static_class(), &FileBacked::static_class());
  return descriptor;
}

const ClassDescriptor& FileBackedToCpuMoveOperation::static_class() {
  static const ClassDescriptor& descriptor =
      builtin_operation_class("FileBackedToCpuMoveOperation", &MoveOperation::static_class(),
                              &FileBacked::static_class(), &CPU::static_class());
  return descriptor;
}

std::span<const ClassDescriptor* const> builtin_move_operation_classes() {
  static const ClassDescriptor* const classes[] = {
      &MoveOperation::static_class(),
      &ElementwiseMoveOperation::static_class(),
      &CpuToFileBackedMoveOperation::static_class(),
      &FileBackedToCpuMoveOperation::static_class(),
  };
  return classes;
}

}  // namespace strideweave
