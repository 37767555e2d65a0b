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
//      (TypeError), the route (resolve_move_route: a definition's
//      TransferRoute, a move operation class, or NotImplementedError) whose
//      class pins a class the pair does not match (TypeError naming the
//      operation; checked on the class, not an instance), under grad mode for
//      a source that requires grad the reverse route (capture_reverse_route:
//      NotImplementedError naming both classes), a destination with fewer
//      slots than the layout's cosize that is not empty (ValueError;
//      allocation is refused later by a class that does not support it);
//   3. pins: the source, then the destination, each for "move #N", before
//      any caller's hook runs, so no hook can release, write, move or own
//      either carrier (spec/carrier-storage: "A move shields its carriers");
//   4. route preparation: a move operation class is instantiated
//      (ClassDescriptor::make_operation), or a TransferRoute's provider
//      prepare()s the request, which passed the whole table, and may refuse
//      it by throwing;
//   5. allocation of an empty destination to exactly cosize, through its
//      lease; the output Tensor (destination, offset 0, the source layout);
//   6. submission: the prepared transfer starts inline (before initiate
//      returns) or on the process pool: when it runs_on_worker(), or when
//      either carrier has foreign storage (its hooks run Python, which may
//      block on I/O, and initiate must not wait for I/O).
// From the pins to its destruction the request is in the process's list of
// requests in flight: a fork() child fails those it finds unfinished
// (abandon_after_fork), since their threads do not exist there.
// A route provider's prepare and the transfer run with grad mode off: a
// provider's operations record no node.
// A failure in 2-6 ends the pins taken and changes nothing else, except that
// a failure to submit leaves an empty destination allocated (zeroed, its
// version incremented once by the allocation): allocation happens only after
// both pins are held, and a failed allocation allocates nothing.
//
// Terminal commit, exactly once, when both "start returned" and "done" (the
// transfer's report) have happened: a two-party latch, on the thread that
// arrives last (the one running start(), or for an asynchronous transfer
// whichever thread reports its outcome after start() returned). Success is checked first (result
// validation: the destination is live and holds the cosize slots); then
//   success: the destination's pin ends through Lease::commit_move, its
//     version what it was before the move (the move's writes, an allocation
//     included, are no in-place mutation) and its moves_received() up by
//     exactly one, the source is released through its lease (its version
//     unchanged), a differentiable move's MoveNode becomes the output's
//     producing node, then success is recorded with the output Tensor;
//   failure: both pins end (the destination's version increments once when
//     the transfer wrote it, its slots then unspecified; the source is live
//     with its values and version), then the exception is recorded.
// The request keeps the tensor, both carriers and the prepared transfer (the
// provider's resources) alive until then, whether or not anyone holds its
// completion, and drops the prepared transfer at the commit.
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "strideweave/autograd/node.h"
#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/move/completion.h"
#include "strideweave/move/faults.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/move/route.h"
#include "strideweave/move/transfer.h"
#include "strideweave/profiling/profiler.h"
#include "strideweave/tensor/tensor.h"

namespace strideweave {

class MoveRequest : public std::enable_shared_from_this<MoveRequest> {
 public:
  using Result = std::shared_ptr<const Tensor>;

  // See the file comment. `route`, when given, replaces the resolution of
  // the pair's route (a move node's captured reverse route).
  static std::shared_ptr<MoveRequest> initiate(std::shared_ptr<const Tensor> tensor,
                                               std::shared_ptr<Carrier> destination,
                                               const MoveRoute* route = nullptr);

  const Completion<Result>& completion() const noexcept { return completion_; }

  ~MoveRequest();

  // "move #N": the name its pins report.
  const std::string& name() const noexcept { return name_; }

  // initiate's constructor, public only so that std::make_shared can call it
  // (one allocation for the request and its count); nothing outside the
  // class can name its key.
  class Key {
    friend class MoveRequest;
    explicit Key() = default;
  };
  explicit MoveRequest(Key /*key*/) {}

 private:
  friend class TransferDone::State;
  void run() noexcept;
  // Records the transfer's outcome (the first report wins; later ones are
  // ignored), then arrives at the commit latch as "done".
  void report(std::exception_ptr error) noexcept;
  // One party of the commit latch ("start returned" or "done") arrives; the
  // last of the two commits.
  void arrive() noexcept;
  void commit(std::exception_ptr error) noexcept;
  // "the provider of route ...", "the move operation ...": for messages only.
  std::string transfer_name() const;
  // Throws RuntimeError unless the destination is live and holds the result's slots.
  void validate_result() const;
  // In a fork() child, for a request that was in flight in the parent: its
  // transfer and commit ran on threads the child does not have. Fails it with
  // RuntimeError naming the fork and ends both pins (the destination's slots
  // unspecified), unless its outcome was recorded before the fork.
  void abandon_after_fork() noexcept;
  friend struct RequestsInFlight;

  std::string name_;
  MoveRoute route_;  // what runs the transfer
  // The transfer's context: filled at validation, given the leases below,
  // the output and the staging slot once both pins are held.
  MoveTransfer transfer_;
  std::shared_ptr<PreparedTransfer> prepared_;  // the operation, or what the provider prepared
  std::optional<Lease> source_lease_;
  std::optional<Lease> destination_lease_;
  // The value a staging transfer built (PreparedTransfer::stages_destination),
  // installed in the destination at a successful commit.
  std::shared_ptr<StagedValue> staged_;
  std::shared_ptr<autograd::Node> node_;  // attached to the output at a successful commit
  std::atomic<int> pending_parties_{2};   // of the commit latch: "start returned" and "done"
  std::atomic<bool> reported_{false};
  std::exception_ptr outcome_;  // set by the first report, before it arrives
  // Its submission and completion events (operation profiling): submitted
  // just before the transfer is submitted, completed at the terminal commit
  // before the outcome is recorded.
  profiling::MoveProfile profile_;
  Completion<Result> completion_;
  bool in_flight_ = false;  // listed among the requests in flight (from its pins on)
  // Its neighbours in that list (intrusive: listing allocates nothing),
  // guarded by the list's mutex.
  MoveRequest* in_flight_prev_ = nullptr;
  MoveRequest* in_flight_next_ = nullptr;
};

// Rows 1-3 of initiate()'s checks, which come before the destination's: a
// multi-subtensor Tensor (NotImplementedError), a released source, an owned
// source (RuntimeError). Returns the source subtensor.
const Subtensor& validate_move_source(const Tensor& tensor);

// The transfer whose copy hook the calling thread is running, or nullptr (a
// hook calling its base class's copy finds its lease through it).
const MoveTransfer* current_move_transfer() noexcept;

// Runs `operation`'s copy hook for `transfer` on the calling thread as a move
// runs it: after the fault stage kCopy, with the destination's lease admitting
// the calling thread, current_move_transfer() returning `transfer` and grad
// mode off. For lowered execution (move/lowered.h); the hook's exception
// propagates.
void run_copy_hook(MoveOperation& operation, const MoveTransfer& transfer);

// The allocation stage of a move, public or lowered: its fault point
// (MoveStage::kAllocation, always reached), then, when `allocate`, the
// allocation of the empty destination to `slots` slots through its lease,
// zeroed unless `for_overwrite` (Lease::allocate_for_overwrite: the transfer
// writes every slot).
void allocation_stage(Lease& destination, bool allocate, int64_t slots, bool for_overwrite = false);

// Whether a successful start() of `prepared` writes every slot of
// [0, layout.cosize()) of the destination (PreparedTransfer::destination_fill):
// when it does, a move allocates an empty destination for overwrite.
bool fills_every_slot(const PreparedTransfer& prepared, const Layout& layout);

}  // namespace strideweave
