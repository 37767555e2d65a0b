// The one transfer interface of movement (spec/interop-movement): how a move
// request runs whatever moves its values, be it a built-in move operation, a
// Python subclass's _copy hook, or what a definition route's TransferProvider
// prepared.
//
//   MoveTransfer     the transfer's context: what a provider's prepare()
//                    sees (validated, sized and pinned, not yet allocated),
//                    and, once the destination is allocated, the leases and
//                    the output the transfer writes through. One per move,
//                    owned by it.
//   PreparedTransfer what runs the transfer: start(transfer, done).
//                    MoveOperation implements it; so does each provider's
//                    prepared object.
//   TransferDone     how a transfer reports its outcome, once.
//   StagedValue      a destination value a staging transfer built in fresh
//                    storage, installed by the move at its commit.
//
// The move commits when both "start returned" and "done" have happened,
// whichever comes last, on that thread (move/request.h).
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <utility>

namespace strideweave {

class Carrier;
class Lease;
class Tensor;
struct TransferRoute;

// A destination value a transfer built in fresh storage of its own
// (PreparedTransfer::stages_destination): the move installs it in the
// destination at its terminal commit, after every check passed, or drops it
// when the move fails.
class StagedValue {
 public:
  virtual ~StagedValue() = default;
  // The slots the destination will hold once the value is installed.
  virtual int64_t slots() const = 0;
  // Puts the value in place through the destination's lease (one write
  // through it). Called once, only after the transfer reported success.
  virtual void install(Lease& destination) = 0;
};

// One move's transfer. The move fills the first group when the request has
// passed validation and pinned both carriers (a route's provider reads it in
// prepare(): dtype, layout, offset, element_count, each carrier's I/O
// alignment and block size), and the second once the destination is
// allocated, before start(); it keeps every member alive until its terminal
// commit.
struct MoveTransfer {
  // Known at validation.
  const TransferRoute* route = nullptr;    // the definition route run, or null for a move operation
  std::shared_ptr<const Tensor> tensor{};  // the Tensor being moved, as supplied
  std::shared_ptr<Carrier> source{};       // its carrier
  std::shared_ptr<Carrier> destination{};  // the receiving carrier, as supplied
  int64_t offset = 0;                      // the Tensor's offset into source
  int64_t element_count = 0;               // the layout's cosize: the slots the transfer covers
  int64_t source_alignment = 1;            // source->io_alignment()
  int64_t source_block_size = 1;           // source->io_block_size()
  int64_t destination_alignment = 1;       // destination->io_alignment()
  int64_t destination_block_size = 1;      // destination->io_block_size()

  // Gained once both pins are held.
  Lease* source_lease = nullptr;           // the move's pin of source (readable)
  Lease* destination_lease = nullptr;      // the move's private write path to destination
  std::shared_ptr<const Tensor> output{};  // destination at offset 0 under the source layout
                                           // (null for a staging transfer until its commit)
  // Where a staging transfer leaves its value, set before it reports success
  // (null for a transfer that does not stage: it writes the destination).
  std::shared_ptr<StagedValue>* staged = nullptr;
};

// Reports the outcome of one transfer to its move, once: nullptr for success
// or the failure. Copyable; the first report of any copy wins and later ones
// are ignored. When every copy is destroyed without a report, the move fails
// with RuntimeError naming the transfer ("dropped the transfer"), so a
// transfer that loses its completion cannot leave the carriers pinned
// forever. Callable from any thread, holding no core lock.
class TransferDone {
 public:
  class State;
  explicit TransferDone(std::shared_ptr<State> state) : state_(std::move(state)) {}
  void operator()(std::exception_ptr error = nullptr) const;

 private:
  std::shared_ptr<State> state_;
};

// What runs one move's transfer.
class PreparedTransfer {
 public:
  virtual ~PreparedTransfer() = default;

  // Fills destination slots [0, element_count) so that transfer.output holds
  // transfer.tensor's logical values, writing through
  // transfer.destination_lease (from any thread) or the destination's public
  // entry points (admitted on the thread running start()). Reports through
  // `done`, before start() returns (synchronous) or later from any thread
  // (asynchronous). An exception thrown by start() is the failure when
  // nothing was reported yet. Runs once, after every validation, with both
  // carriers pinned by the move.
  virtual void start(const MoveTransfer& transfer, TransferDone done) = 0;

  // Whether start() must run on a worker of the process pool (it calls
  // Python or blocks) rather than on the thread initiating the move.
  virtual bool runs_on_worker() const { return true; }

  // Whether start() stages the destination's new value in fresh storage
  // (MoveTransfer::staged) instead of writing the destination: the move then
  // leaves an empty destination unallocated and installs the staged value at
  // its terminal commit, so a failed move changes nothing in the destination.
  virtual bool stages_destination() const { return false; }

  // Which destination slots a successful start() writes: none promised
  // (kUnknown, the default: a caller's code), the slots transfer.output's
  // layout addresses (kAddressedSlots), or every slot of [0, element_count),
  // holes included (kWholeSpan). A move that allocates an empty destination
  // leaves the new storage unzeroed when every slot will be written
  // (fills_every_slot in move/request.cc, Lease::allocate_for_overwrite); a
  // failed move leaves the slots unspecified either way.
  enum class Fill : uint8_t { kUnknown, kAddressedSlots, kWholeSpan };
  virtual Fill destination_fill() const { return Fill::kUnknown; }
};

}  // namespace strideweave
