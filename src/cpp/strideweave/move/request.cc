#include "strideweave/move/request.h"

#include <atomic>
#include <string>

#include "strideweave/exec/thread_pool.h"
#include "strideweave/move/legacy_registry.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::atomic<uint64_t> next_move_id{1};

thread_local const MoveTransfer* running_transfer = nullptr;

// Marks the calling thread as running `transfer`'s copy hook.
class RunningTransfer {
 public:
  explicit RunningTransfer(const MoveTransfer& transfer) : previous_(running_transfer) {
    running_transfer = &transfer;
  }
  ~RunningTransfer() { running_transfer = previous_; }
  RunningTransfer(const RunningTransfer&) = delete;
  RunningTransfer& operator=(const RunningTransfer&) = delete;

 private:
  const MoveTransfer* previous_;
};

void validate_destination(const Carrier& source, const Carrier& destination, const DType& dtype) {
  if (&destination == &source) {
    throw ValueError("move: the destination " + destination.label() +
                     " is the Tensor's own carrier");
  }
  if (destination.is_released()) {
    throw RuntimeError("move: the destination " + destination.label() + " is released");
  }
  if (!destination.is_mutable()) {
    throw RuntimeError("move: the destination " + destination.label() +
                       " is not publicly mutable (constructed immutable, owned or pinned)");
  }
  if (destination.dtype() != dtype) {
    throw TypeError("move: the destination " + destination.label() + " holds " +
                    destination.dtype().name() + ", not the Tensor's dtype " + dtype.name());
  }
}

}  // namespace

const MoveTransfer* current_move_transfer() noexcept { return running_transfer; }

const Subtensor& validate_move_source(const Tensor& tensor) {
  const Subtensor& source = tensor.subtensor("move");
  const Carrier& carrier = *source.carrier;
  if (carrier.is_released()) {
    throw RuntimeError("move: the source " + carrier.label() + " is released");
  }
  if (const std::shared_ptr<Carrier> owner = carrier.owner()) {
    throw RuntimeError("move: the source " + carrier.label() + " is owned by " + owner->label());
  }
  return source;
}

std::shared_ptr<MoveRequest> MoveRequest::initiate(std::shared_ptr<const Tensor> tensor,
                                                   std::shared_ptr<Carrier> destination,
                                                   const OperationFactory& make_operation) {
  const Subtensor& source = validate_move_source(*tensor);
  validate_destination(*source.carrier, *destination, tensor->dtype());

  std::shared_ptr<MoveRequest> request(new MoveRequest());
  const ClassDescriptor& operation_class = LegacyMoveRegistry::global().dispatch(
      source.carrier->carrier_class(), destination->carrier_class());
  request->operation_ = make_operation(operation_class);
  request->operation_->check_pair(source.carrier->carrier_class(), destination->carrier_class());

  const int64_t cosize = source.layout.size() == 0 ? 0 : source.layout.cosize();
  const int64_t slots = destination->slots();
  const bool allocate = slots < cosize;
  if (allocate && slots != 0) {
    throw ValueError("move: the destination " + destination->label() + " holds " +
                     std::to_string(slots) + " slots, fewer than the layout's cosize " +
                     std::to_string(cosize) + ", and only an empty carrier can allocate");
  }

  request->name_ = "move #" + std::to_string(next_move_id++);
  request->source_lease_.emplace(source.carrier->pin(request->name_));
  request->destination_lease_.emplace(destination->pin(request->name_));
  if (allocate) request->destination_lease_->allocate(cosize);

  request->transfer_ =
      MoveTransfer{tensor, destination, Tensor::make(destination, source.layout, 0), cosize,
                   &*request->destination_lease_};
  if (request->operation_->runs_on_worker()) {
    process_pool().submit([request] { request->run(); });
  } else {
    request->run();
  }
  return request;
}

void MoveRequest::run() noexcept {
  try {
    {
      const Lease::Admission admitted = destination_lease_->admit();
      const RunningTransfer running(transfer_);
      operation_->copy(transfer_);
    }
    destination_lease_->mark_written();  // one mutation, whatever the copy wrote
    destination_lease_->end();
    source_lease_->release();
    completion_.succeed(transfer_.output);
  } catch (...) {
    destination_lease_->end();
    source_lease_->end();
    completion_.fail(std::current_exception());
  }
}

}  // namespace strideweave
