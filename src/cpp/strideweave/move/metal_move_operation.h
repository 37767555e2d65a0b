// The Metal move operations (spec/interop-movement, "Metal movement preserves
// the complete Tensor value boundary"): the built-in operations of the three
// carrier pairs with a Metal side, whose device copies complete
// asynchronously on the Metal queue.
#pragma once

#include <memory>

#include "strideweave/carrier/class_descriptor.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/metal.h"
#include "strideweave/device/queue.h"
#include "strideweave/dtype/dtype.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/move/transfer.h"

namespace strideweave {

// The three Metal pairs: the complete physical span [offset, offset + cosize)
// of the source, holes included, with one device copy command (upload,
// download or device-to-device) submitted to the Metal queue.
//
// start() stages the value (stages_destination): it copies into fresh
// storage allocated without zeroing (Metal::allocate_storage,
// CPU::allocate_storage) and returns; the move completes when the command's
// event does (on the queue's completion thread, after synchronize()), so host
// values are never decoded, nor a Metal source released, before its pending
// work finished. The move installs the staged value at its terminal commit: a
// Metal destination, and an empty CPU one, take the fresh storage itself
// (Metal::install, CPU::install); a sized CPU destination receives one memcpy
// of the span. A failure at allocation, copy or synchronization therefore
// changes nothing in the destination: not its slots, not its version, and an
// empty destination stays empty (spec/interop-movement, "Metal movement
// preserves the complete Tensor value boundary"). A sized Metal destination
// holding more slots than the span keeps the rest: the staged buffer receives
// them by a device copy first.
//
// copy() writes the destination in place, starts and waits (lowered transfers
// and a subclass calling its base class's copy): the CPU source is pinned
// readable by the move, a CPU destination written through
// Lease::write_locked, a Metal one counted written at submission.
class MetalMoveOperation : public MoveOperation {
 public:
  void start(const MoveTransfer& transfer, TransferDone done) override;
  void copy(const MoveTransfer& transfer) override;
  // Metal::supports: Float32, Int32, Bool.
  bool supports_dtype(const DType& dtype) const override;
  bool stages_destination() const override { return true; }

 protected:
  // What submit() submitted: the copy's event, the event of a command buffer
  // submitted before it whose failure fails the move too (or null), and the
  // staged value (null when not staging).
  struct Submission {
    device::EventRef event;
    device::EventRef earlier;
    std::shared_ptr<StagedValue> staged;
  };
  // Submits the span copy of `transfer`: into fresh storage when `stage`,
  // else into the destination in place.
  virtual Submission submit(const MoveTransfer& transfer, bool stage) const = 0;
};

// The built-in operation of the exact pair (Source, Destination), one class
// per pair (a template keyed on the pair): its descriptor pins both classes,
// and submit() is the pair's one command (specialized per pair in the .cc).
template <class Source, class Destination>
class MetalPairMoveOperation : public MetalMoveOperation {
 public:
  static const ClassDescriptor& static_class();
  const ClassDescriptor& operation_class() const override { return static_class(); }

 protected:
  Submission submit(const MoveTransfer& transfer, bool stage) const override;
};

// (CPU, Metal): an upload.
using CpuToMetalMoveOperation = MetalPairMoveOperation<CPU, Metal>;
// (Metal, CPU): a download.
using MetalToCpuMoveOperation = MetalPairMoveOperation<Metal, CPU>;
// (Metal, Metal): a device-to-device copy.
using MetalToMetalMoveOperation = MetalPairMoveOperation<Metal, Metal>;

// Each pair's command.
template <>
auto CpuToMetalMoveOperation::submit(const MoveTransfer& transfer, bool stage) const -> Submission;
template <>
auto MetalToCpuMoveOperation::submit(const MoveTransfer& transfer, bool stage) const -> Submission;
template <>
auto MetalToMetalMoveOperation::submit(const MoveTransfer& transfer, bool stage) const
    -> Submission;

extern template class MetalPairMoveOperation<CPU, Metal>;
extern template class MetalPairMoveOperation<Metal, CPU>;
extern template class MetalPairMoveOperation<Metal, Metal>;

}  // namespace strideweave
