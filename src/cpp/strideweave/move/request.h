// MoveRequest: one logical move of a Tensor's values into a caller-supplied
// carrier (spec/interop-movement: "move relocates values into a
// caller-supplied carrier", "move_async validates one movement request",
// "Move submission is eager but does not force host synchronization", "One
// asynchronous move publishes at one terminal boundary", "Pending movement
// preserves lifetime through completion").
//
// initiate() runs, in order, on the calling thread, throwing directly:
//   1. a multi-subtensor Tensor: NotImplementedError (core-tensor-
//      representation's boundary), before anything else;
//   2. the validation table, first failing row wins: source released
//      (RuntimeError), source owned (RuntimeError), destination is the
//      source carrier (ValueError), destination released (RuntimeError),
//      destination not publicly mutable (RuntimeError), dtype mismatch
//      (TypeError);
//   3. the route: the legacy registry's operation class for the exact pair
//      (ElementwiseMoveOperation when it has none), instantiated through
//      `make_operation`, then its pins (TypeError naming the operation);
//   4. sizing: a destination with fewer slots than the layout's cosize
//      fails with ValueError unless it is empty and supports allocation;
//   5. pins: the source, then the destination, each for "move #N"; a failure
//      ends the pins taken and rethrows;
//   6. allocation of an empty destination to exactly cosize, through its
//      lease; the output Tensor (destination, offset 0, the source layout);
//   7. submission: the operation's copy() runs inline (before initiate
//      returns) or on the process pool (runs_on_worker()).
// Nothing before submission changes either carrier (a refused pin changes
// nothing; allocation happens only after both pins are held, and a failure
// after it is a terminal failure).
//
// Terminal commit, exactly once, on the thread that finishes the copy:
//   success: the destination's pin ends and its version increments by
//     exactly one (the move's writes count as one mutation, also when there
//     were none), the source is released through
//     its lease (its version unchanged), then success is recorded with the
//     output Tensor;
//   failure: both pins end (the destination's version increments once when
//     the copy wrote it, its slots then unspecified; the source is live with
//     its values and version), then the exception is recorded.
// The request keeps the tensor, both carriers and the operation alive until
// then, whether or not anyone holds its completion.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "strideweave/carrier/carrier.h"
#include "strideweave/move/completion.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave {

class MoveRequest : public std::enable_shared_from_this<MoveRequest> {
 public:
  using Result = std::shared_ptr<const Tensor>;
  // An instance of a move operation class (the binding makes Python ones).
  using OperationFactory = std::function<std::shared_ptr<MoveOperation>(const ClassDescriptor&)>;

  // See the file comment.
  static std::shared_ptr<MoveRequest> initiate(std::shared_ptr<const Tensor> tensor,
                                               std::shared_ptr<Carrier> destination,
                                               const OperationFactory& make_operation);

  const Completion<Result>& completion() const noexcept { return completion_; }

  // "move #N": the name its pins report.
  const std::string& name() const noexcept { return name_; }

 private:
  MoveRequest() = default;
  void run() noexcept;

  std::string name_;
  std::shared_ptr<MoveOperation> operation_;
  MoveTransfer transfer_;
  std::optional<Lease> source_lease_;
  std::optional<Lease> destination_lease_;
  Completion<Result> completion_;
};

// Rows 1-3 of initiate()'s checks, which come before the destination's: a
// multi-subtensor Tensor (NotImplementedError), a released source, an owned
// source (RuntimeError). Returns the source subtensor.
const Subtensor& validate_move_source(const Tensor& tensor);

// The transfer whose copy hook the calling thread is running, or nullptr (a
// hook calling its base class's copy finds its lease through it).
const MoveTransfer* current_move_transfer() noexcept;

}  // namespace strideweave
