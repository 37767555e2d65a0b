// The move-operation class hierarchy (spec/interop-movement, "A move
// operation performs its transfer through the copy hook", "A move operation
// may pin the carrier pair it supports").
//
// MoveOperation is the root; the built-ins here are ElementwiseMoveOperation
// (unpinned: any pair), CpuToFileBackedMoveOperation (pinned CPU ->
// FileBacked), FileBackedToCpuMoveOperation (pinned FileBacked -> CPU),
// CpuToBlockDeviceMoveOperation (pinned CPU -> BlockDeviceCarrier) and
// BlockDeviceToCpuMoveOperation (pinned BlockDeviceCarrier -> CPU); the three
// Metal pairs, whose device copies complete asynchronously, are in
// move/metal_move_operation.h, and move/builtins.h lists them all.
// Each class has one static ClassDescriptor, created on first use and never
// destroyed (worker threads may still name it while the process exits), which
// makes the class's instances; a Python subclass's instance reports the
// descriptor the binding created for its class, whose maker instantiates the
// Python class. A class's pins are data of its descriptor.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "strideweave/carrier/block_device.h"
#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/class_descriptor.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/move/transfer.h"
#include "strideweave/ops/operation.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave {

// An Operation (ops/operation.h) whose forward is its copy hook, run by a move
// request, and whose backward is the MoveNode that request records. It is the
// transfer a move runs (PreparedTransfer, move/transfer.h): the request
// starts the operation itself. Its copy hook receives the transfer's context
// (the spec's _copy(tensor, destination, output, element_count) are members of
// MoveTransfer).
class MoveOperation : public ops::Operation, public PreparedTransfer {
 public:
  MoveOperation() = default;
  ~MoveOperation() override;

  // The descriptor of the root class of all move operations.
  static const ClassDescriptor& static_class();

  // The descriptor of this object's exact class.
  virtual const ClassDescriptor& operation_class() const { return static_class(); }

  // The exact class's name.
  std::string name() const override { return operation_class().name(); }

  // Checks that operations of the class `operation` support moving from a
  // carrier of exact class `source_class` to one of exact class
  // `destination_class`: a pinned side accepts its pinned class alone, an
  // unpinned side any class. Throws TypeError naming the operation, the side
  // and the required class. Checks the source side first. Needs no instance,
  // so a move checks the pair before it instantiates a caller's class.
  static void check_pair(const ClassDescriptor& operation, const ClassDescriptor& source_class,
                         const ClassDescriptor& destination_class);

  // check_pair for this operation's exact class.
  void check_pair(const ClassDescriptor& source_class,
                  const ClassDescriptor& destination_class) const {
    check_pair(operation_class(), source_class, destination_class);
  }

  // The copy hook: fills destination slots [0, element_count) so that
  // `output` holds the logical values of `tensor`; slots the layout does not
  // address are unspecified. Runs after every validation, with both carriers
  // pinned by the request: it writes the destination through
  // transfer.destination_lease, or through the destination's public entry
  // points, which the request admits on the thread running the hook. An
  // exception becomes the move's terminal failure. The default throws
  // NotImplementedError naming the operation.
  virtual void copy(const MoveTransfer& transfer);

  // Whether copy() must run on a worker of the process pool (it calls Python
  // or blocks on I/O) rather than on the thread that initiates the move. False
  // by default.
  bool runs_on_worker() const override { return false; }

  // Starts the transfer and reports its outcome through `done`, once: before
  // returning, or later from any thread (an operation whose device work
  // completes asynchronously). An exception thrown before anything was
  // reported is the failure. The default runs copy() and reports success.
  void start(const MoveTransfer& transfer, TransferDone done) override;

  // Whether the operation can move values of `dtype` (the edges a composite
  // checks at construction ask it); every dtype by default.
  virtual bool supports_dtype(const DType& dtype) const;

  // Whether start() stages the destination's value in fresh storage
  // (PreparedTransfer::stages_destination); copy() never does. False by
  // default.
  bool stages_destination() const override { return false; }
};

// Moves the slots the layout reaches through the carriers' storage; accepts
// any pair. The fallback for every pair without a registered operation.
class ElementwiseMoveOperation : public MoveOperation {
 public:
  static const ClassDescriptor& static_class();
  const ClassDescriptor& operation_class() const override { return static_class(); }

  // Copies the slots the layout reaches, walked in storage order
  // (storage_order, then the span walker), holding the source's lock, then the
  // destination's through its lease (Lease::write_locked): one consistent
  // snapshot of the source, written in one hold of the destination's lock.
  // Dtypes with an item size are copied as stored: host memory to host memory
  // by the strided copy kernel; otherwise one range call per run, read
  // straight into the destination's host memory, written straight from the
  // source's, or through a buffer of one run when neither side is host memory.
  // Abstract dtypes are copied as element values through a snapshot image and
  // the lease's value writes. Holes keep their prior values.
  void copy(const MoveTransfer& transfer) override;

  // copy(), except that the write into a destination with foreign storage is
  // started (SlotWriter::start_write_range) and the outcome reported when the
  // storage finishes it: a Python _write_range that returns a Future holds no
  // thread while it runs.
  void start(const MoveTransfer& transfer, TransferDone done) override;

  // Every slot the layout addresses is written; holes are not.
  Fill destination_fill() const override { return Fill::kAddressedSlots; }
};

// The built-in operation of an exact pair (Source, Destination) of host
// memory and a file (one class per pair: a template keyed on the pair). It
// copies the complete physical span [offset, offset + cosize) of the source,
// holes included, through the host side's buffer with one range transfer,
// holding the source's lock, then the destination's through its lease: one
// pwrite (CPU -> FileBacked) or pread (FileBacked -> CPU) straight from or
// into the CPU buffer; for a BlockDeviceCarrier one range write in whole
// aligned blocks (read-modify-write at a partial last block; the move syncs
// the destination before its terminal commit) or one range read. It blocks on
// I/O, so it runs on a worker.
template <class Source, class Destination>
class SpanMoveOperation : public MoveOperation {
 public:
  static const ClassDescriptor& static_class();
  const ClassDescriptor& operation_class() const override { return static_class(); }
  void copy(const MoveTransfer& transfer) override;
  bool runs_on_worker() const override { return true; }
  Fill destination_fill() const override { return Fill::kWholeSpan; }
};

using CpuToFileBackedMoveOperation = SpanMoveOperation<CPU, FileBacked>;
using FileBackedToCpuMoveOperation = SpanMoveOperation<FileBacked, CPU>;
using CpuToBlockDeviceMoveOperation = SpanMoveOperation<CPU, BlockDeviceCarrier>;
using BlockDeviceToCpuMoveOperation = SpanMoveOperation<BlockDeviceCarrier, CPU>;

extern template class SpanMoveOperation<CPU, FileBacked>;
extern template class SpanMoveOperation<FileBacked, CPU>;
extern template class SpanMoveOperation<CPU, BlockDeviceCarrier>;
extern template class SpanMoveOperation<BlockDeviceCarrier, CPU>;

// The static descriptor of the built-in move-operation class Operation named
// `name`, whose maker makes an Operation: for the static_class() of built-ins
// only. Created on first use and never destroyed (worker threads may still
// name it while the process exits).
template <class Operation>
const ClassDescriptor& builtin_operation_class(std::string name, const ClassDescriptor* parent,
                                               const ClassDescriptor* source,
                                               const ClassDescriptor* destination) {
  constexpr ClassDescriptor::OperationMaker make = [](const ClassDescriptor&) {
    return std::shared_ptr<MoveOperation>(std::make_shared<Operation>());
  };
  return *ClassDescriptor::move_operation(std::move(name), parent, source, destination, make)
              .release();
}

}  // namespace strideweave
