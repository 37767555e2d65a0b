// The move-operation class hierarchy (spec/interop-movement, "A move
// operation performs its transfer through the copy hook", "A move operation
// may pin the carrier pair it supports").
//
// MoveOperation is the root; the built-ins are ElementwiseMoveOperation
// (unpinned: any pair), CpuToFileBackedMoveOperation (pinned CPU ->
// FileBacked) and FileBackedToCpuMoveOperation (pinned FileBacked -> CPU).
// Each class has one static ClassDescriptor, created on first use and never
// destroyed (worker threads may still name it while the process exits); a
// Python subclass's instance reports the descriptor the binding created for
// its class. A class's pins are data of its descriptor.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <span>

#include "strideweave/carrier/class_descriptor.h"

namespace strideweave {

class MoveOperation {
 public:
  MoveOperation() = default;
  virtual ~MoveOperation();
  MoveOperation(const MoveOperation&) = delete;
  MoveOperation& operator=(const MoveOperation&) = delete;

  // The descriptor of the root class of all move operations.
  static const ClassDescriptor& static_class();

  // The descriptor of this object's exact class.
  virtual const ClassDescriptor& operation_class() const { return static_class(); }

  // Checks that this operation supports moving from a carrier of exact class
  // `source_class` to one of exact class `destination_class`: a pinned side
  // accepts its pinned class alone, an unpinned side any class. Throws
  // TypeError naming the operation, the side and the required class. Checks
  // the source side first.
  void check_pair(const ClassDescriptor& source_class,
                  const ClassDescriptor& destination_class) const;
};

// Moves element by element through the carriers' entry points; accepts any
// pair. The fallback for every pair without a registered operation.
class ElementwiseMoveOperation : public MoveOperation {
 public:
  static const ClassDescriptor& static_class();
  const ClassDescriptor& operation_class() const override { return static_class(); }
};

// The built-in operation for (CPU, FileBacked).
class CpuToFileBackedMoveOperation : public MoveOperation {
 public:
  static const ClassDescriptor& static_class();
  const ClassDescriptor& operation_class() const override { return static_class(); }
};

// The built-in operation for (FileBacked, CPU).
class FileBackedToCpuMoveOperation : public MoveOperation {
 public:
  static const ClassDescriptor& static_class();
  const ClassDescriptor& operation_class() const override { return static_class(); }
};

// The static descriptors of every built-in move-operation class, the root
// MoveOperation first.
std::span<const ClassDescriptor* const> builtin_move_operation_classes();

}  // namespace strideweave
