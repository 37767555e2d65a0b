#include "strideweave/move/move_operation.h"

#include <string>
#include <tuple>
#include <vector>

#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/layout/runs.h"
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

void MoveOperation::copy(const MoveTransfer&) {
  throw NotImplementedError("the move operation " + operation_class().name() +
                            " does not implement the copy hook _copy");
}

void ElementwiseMoveOperation::copy(const MoveTransfer& transfer) {
  const Subtensor& source = transfer.tensor->subtensor("move");
  Lease& destination = *transfer.destination_lease;
  const RunPlan plan(source.layout, source.offset);
  const std::optional<std::size_t> itemsize = source.carrier->dtype().itemsize();
  if (itemsize) {
    std::vector<std::byte> image(static_cast<std::size_t>(plan.size()) * *itemsize);
    source.carrier->read_locked("move", [&](const SlotReader& reader) {
      std::byte* cursor = image.data();
      plan.for_each_run([&](int64_t first, int64_t count) {
        reader.read_range(first, count, cursor);
        cursor += static_cast<std::size_t>(count) * *itemsize;
      });
    });
    const std::byte* cursor = image.data();
    plan.for_each_run([&](int64_t first, int64_t count) {
      const std::size_t bytes = static_cast<std::size_t>(count) * *itemsize;
      destination.write_range(first - source.offset, {cursor, bytes});
      cursor += bytes;
    });
    return;
  }
  std::vector<Value> image(static_cast<std::size_t>(plan.size()));
  source.carrier->read_locked("move", [&](const SlotReader& reader) {
    Value* cursor = image.data();
    plan.for_each_run([&](int64_t first, int64_t count) {
      reader.read_values(first, count, cursor);
      cursor += count;
    });
  });
  const Value* cursor = image.data();
  plan.for_each_run([&](int64_t first, int64_t count) {
    destination.write_range_values(first - source.offset,
                                   {cursor, static_cast<std::size_t>(count)});
    cursor += count;
  });
}

void CpuToFileBackedMoveOperation::copy(const MoveTransfer& transfer) {
  const Subtensor& source = transfer.tensor->subtensor("move");
  const std::size_t itemsize = *source.carrier->dtype().itemsize();
  // Source lock, then the destination's inside the lease: both carriers are
  // pinned by this move, so no caller takes them in the other order.
  source.carrier->read_locked("move", [&](const SlotReader& reader) {
    const std::byte* span = reader.host() + static_cast<std::size_t>(source.offset) * itemsize;
    transfer.destination_lease->write_range(
        0, {span, static_cast<std::size_t>(transfer.element_count) * itemsize});
  });
}

void FileBackedToCpuMoveOperation::copy(const MoveTransfer& transfer) {
  const Subtensor& source = transfer.tensor->subtensor("move");
  const std::vector<std::byte> span =
      source.carrier->read_range(source.offset, transfer.element_count);
  transfer.destination_lease->write_range(0, span);
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
