// CarrierDefinition and TransferRoute (spec/interop-movement, "Move routes are
// exact and definition-owned"): the outgoing routes an exact carrier class
// declares, each to one exact destination class, and whether the class
// permits the elementwise fallback for pairs without a route.
//
// A definition is immutable once constructed; ClassDescriptor::define
// installs it (sealing the class definition-backed).
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "strideweave/carrier/class_descriptor.h"

namespace strideweave {

class Carrier;
class Tensor;
struct MoveTransfer;
struct TransferRoute;

// One move as a route's provider sees it in TransferProvider::prepare():
// validated (the move_async table), sized, its route resolved; not yet pinned,
// allocated or submitted. The provider reads the constraints it cares about
// from here: dtype, layout, offset, element_count, each carrier's I/O
// alignment and block size (Carrier::io_alignment, io_block_size: 1 for
// storage without a constraint), and the carriers' devices and resources
// from the carriers themselves.
struct TransferRequest {
  const TransferRoute* route = nullptr;  // the route being prepared
  std::shared_ptr<const Tensor> tensor;  // the Tensor being moved, as supplied
  std::shared_ptr<Carrier> source;       // its carrier
  std::shared_ptr<Carrier> destination;  // the receiving carrier, as supplied
  int64_t offset = 0;                    // the Tensor's offset into source
  int64_t element_count = 0;             // the layout's cosize: the slots to transfer
  int64_t source_alignment = 1;          // source->io_alignment()
  int64_t source_block_size = 1;         // source->io_block_size()
  int64_t destination_alignment = 1;     // destination->io_alignment()
  int64_t destination_block_size = 1;    // destination->io_block_size()
};

// Reports the outcome of one prepared transfer to its move, once: nullptr
// for success or the failure. Copyable; the first report of any copy wins and
// later ones are ignored. When every copy is destroyed without a report, the
// move fails with RuntimeError naming the route ("the provider dropped the
// transfer"), so a provider that loses its completion cannot leave the
// carriers pinned forever. Callable from any thread, holding no core lock.
class TransferDone {
 public:
  class State;
  explicit TransferDone(std::shared_ptr<State> state) : state_(std::move(state)) {}
  void operator()(std::exception_ptr error = nullptr) const;

 private:
  std::shared_ptr<State> state_;
};

// What prepare() returns: the mechanics of one transfer, run by the move.
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
};

// Implements a route's transfer mechanics. It does not decide validation,
// source release, completion or publication: the move does.
class TransferProvider {
 public:
  virtual ~TransferProvider() = default;

  // Evaluates `request` against the provider's constraints and returns what
  // will run the transfer, or throws to refuse it (the exception reaches
  // move_async's caller directly, before any pin, allocation or submission).
  // Called on the initiating thread, holding no core lock.
  virtual std::shared_ptr<PreparedTransfer> prepare(const TransferRequest& request) = 0;
};

struct TransferRoute {
  const ClassDescriptor* source = nullptr;       // the exact class owning the definition
  const ClassDescriptor* destination = nullptr;  // one exact destination class
  std::string route_id;                          // stable, non-empty, unique in the definition
  std::shared_ptr<TransferProvider> provider;    // non-null
};

// Throws TypeError when a class of `route` is not a carrier class, ValueError
// when its route_id is empty or it has no provider.
void validate_route(const TransferRoute& route);

class CarrierDefinition {
 public:
  // Throws TypeError when `carrier_class` is not a carrier class, the errors
  // of validate_route for each route, and ValueError naming the route when
  // its source is not `carrier_class`, its route_id is repeated or its
  // destination already has a route.
  CarrierDefinition(const ClassDescriptor& carrier_class, std::vector<TransferRoute> routes,
                    bool elementwise_fallback);

  const ClassDescriptor& carrier_class() const noexcept { return carrier_class_; }
  const std::vector<TransferRoute>& routes() const noexcept { return routes_; }
  bool elementwise_fallback() const noexcept { return elementwise_fallback_; }

  // The route to exactly `destination` (matched by identity, never by
  // ancestry), or nullptr.
  const TransferRoute* route_to(const ClassDescriptor& destination) const noexcept;

 private:
  const ClassDescriptor& carrier_class_;
  std::vector<TransferRoute> routes_;
  bool elementwise_fallback_;
};

// How a move of a Tensor on a carrier of exact class `source` into one of
// exact class `destination` transfers (spec/interop-movement, "Move
// dispatches on the exact carrier class pair", "Move routes are exact and
// definition-owned"). Seals both classes first (an open class becomes
// definition-free), then:
//   neither class definition-backed: the legacy registry's operation class
//     for the exact pair (ElementwiseMoveOperation when it has none);
//   otherwise the exact source definition's route to exactly `destination`
//     when it declares one; else ElementwiseMoveOperation when both classes
//     permit the fallback (a definition-free class permits it, as the legacy
//     contract does; a definition-backed one when its definition says so);
//     else NotImplementedError naming both classes.
struct MoveRoute {
  const TransferRoute* route = nullptr;        // a definition's route, or
  const ClassDescriptor* operation = nullptr;  // a move operation class
};
MoveRoute resolve_move_route(const ClassDescriptor& source, const ClassDescriptor& destination);

}  // namespace strideweave
