#include "strideweave/move/request.h"

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "strideweave/autograd/grad_mode.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/exec/thread_pool.h"
#include "strideweave/move/legacy_registry.h"
#include "strideweave/move/move_node.h"
#include "strideweave/ops/accumulate_grad.h"
#include "strideweave/profiling/profiler.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::atomic<uint64_t> next_move_id{1};

// The transfer whose start() or copy hook the calling thread is running.
thread_local const MoveTransfer* current_transfer = nullptr;

// The copy stage's entry: its fault point, then the destination's admission
// of the calling thread.
Lease::Admission enter_copy_stage(const MoveTransfer& transfer) {
  move_fault_point(MoveStage::kCopy);
  return transfer.destination_lease->admit();
}

// What a transfer runs under, on the thread running it, from the copy stage
// on: the fault stage kCopy passed, the destination's lease admitting the
// thread, current_move_transfer() naming the transfer, grad mode off (a
// transfer's operations record no node).
class RunningTransfer {
 public:
  explicit RunningTransfer(const MoveTransfer& transfer)
      : admitted_(enter_copy_stage(transfer)),
        previous_(std::exchange(current_transfer, &transfer)) {}
  ~RunningTransfer() { current_transfer = previous_; }
  RunningTransfer(const RunningTransfer&) = delete;
  RunningTransfer& operator=(const RunningTransfer&) = delete;

 private:
  Lease::Admission admitted_;
  const MoveTransfer* previous_;
  autograd::GradModeGuard records_nothing_{false};
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

// The requests in flight (request.h), so that a fork() child can fail the ones
// whose threads it does not have. Never destroyed; a fork child replaces it.
struct RequestsInFlight {
  std::mutex mu;  // a leaf: held to list or unlist a request, and across fork()
  // A doubly linked list through the requests' own in_flight_ pointers, so
  // that listing a request allocates nothing.
  MoveRequest* first = nullptr;

  // Calls fn(request) for each listed request. Caller holds mu.
  template <class F>
  void for_each_locked(F&& fn) {
    for (MoveRequest* r = first; r != nullptr;) {
      MoveRequest* next = r->in_flight_next_;
      fn(r);
      r = next;
    }
  }

  static RequestsInFlight*& slot() {
    static RequestsInFlight* list = new RequestsInFlight();
    return list;
  }

  static void add(MoveRequest* request) {
    // Registered with the first request, after the fork gate (exec/core_mutex):
    // this prepare handler runs before the gate's, this child handler after it.
    static const int registered = pthread_atfork(&prepare, &parent, &child);
    static_cast<void>(registered);
    RequestsInFlight& list = *slot();
    std::lock_guard lock(list.mu);
    request->in_flight_prev_ = nullptr;
    request->in_flight_next_ = list.first;
    if (list.first != nullptr) list.first->in_flight_prev_ = request;
    list.first = request;
  }

  static void remove(MoveRequest* request) {
    RequestsInFlight& list = *slot();
    std::lock_guard lock(list.mu);
    if (request->in_flight_prev_ != nullptr) {
      request->in_flight_prev_->in_flight_next_ = request->in_flight_next_;
    } else if (list.first == request) {
      list.first = request->in_flight_next_;
    } else {
      return;  // listed in a list a fork child replaced: nothing here links to it
    }
    if (request->in_flight_next_ != nullptr) {
      request->in_flight_next_->in_flight_prev_ = request->in_flight_prev_;
    }
  }

  // Holds the list and every listed completion's lock across the fork, so the
  // child finds them consistent and free. A completion's lock is never held
  // while the list's is taken.
  static void prepare() {
    RequestsInFlight& list = *slot();
    list.mu.lock();
    list.for_each_locked([](MoveRequest* request) { request->completion_.lock_for_fork(); });
  }

  static void parent() {
    RequestsInFlight& list = *slot();
    list.for_each_locked([](MoveRequest* request) { request->completion_.unlock_after_fork(); });
    list.mu.unlock();
  }

  // After the fork gate's child handler (core locks are free): every request
  // still in flight fails, and the child starts an empty list (the old one,
  // whose lock this thread holds, leaks). The requests are kept alive, and
  // deliberately leaked: the last release of one may drop Python objects, which
  // must not happen before Python's own after-fork handling.
  static void child() {
    RequestsInFlight& old = *slot();
    auto* pending = new std::vector<std::shared_ptr<MoveRequest>>();
    old.for_each_locked([pending](MoveRequest* request) {
      request->completion_.unlock_after_fork();
      // Null for one whose destruction began before the fork.
      if (auto held = request->weak_from_this().lock()) pending->push_back(std::move(held));
    });
    slot() = new RequestsInFlight();
    for (const std::shared_ptr<MoveRequest>& request : *pending) request->abandon_after_fork();
  }
};

MoveRequest::~MoveRequest() {
  if (in_flight_) RequestsInFlight::remove(this);
}

void MoveRequest::abandon_after_fork() noexcept {
  if (completion_.done()) return;
  try {
    staged_.reset();
    if (destination_lease_) destination_lease_->end();
    if (source_lease_) source_lease_->end();
    completion_.fail(std::make_exception_ptr(
        RuntimeError(name_ +
                     ": the process forked while this move was in progress; its transfer runs on "
                     "threads this child process does not have, so it fails here (the parent's "
                     "move goes on)")));
  } catch (...) {  // an allocation failed: the completion stays pending
  }
}

const MoveTransfer* current_move_transfer() noexcept { return current_transfer; }

bool fills_every_slot(const PreparedTransfer& prepared, const Layout& layout) {
  switch (prepared.destination_fill()) {
    case PreparedTransfer::Fill::kWholeSpan:
      return true;
    case PreparedTransfer::Fill::kAddressedSlots:
      // The layout addresses every slot of [0, cosize) exactly when it has as
      // many elements as slots and no two elements share a slot.
      return layout.size() == layout.cosize() && layout.is_injective();
    case PreparedTransfer::Fill::kUnknown:
      break;
  }
  return false;
}

void run_copy_hook(MoveOperation& operation, const MoveTransfer& transfer) {
  const RunningTransfer running(transfer);
  operation.copy(transfer);
}

void allocation_stage(Lease& destination, bool allocate, int64_t slots, bool for_overwrite) {
  move_fault_point(MoveStage::kAllocation);
  if (!allocate) return;
  if (for_overwrite) {
    destination.allocate_for_overwrite(slots);
  } else {
    destination.allocate(slots);
  }
}

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
                                                   const MoveRoute* route_given) {
  profiling::MoveProfile profile = profiling::MoveProfile::begin();
  const Subtensor& source = validate_move_source(*tensor);
  validate_destination(*source.carrier, *destination, tensor->dtype());

  auto request = std::make_shared<MoveRequest>(Key{});
  const ClassDescriptor& source_class = source.carrier->carrier_class();
  const ClassDescriptor& destination_class = destination->carrier_class();
  const MoveRoute route =
      route_given != nullptr ? *route_given : resolve_move_route(source_class, destination_class);
  request->route_ = route;
  if (route.route == nullptr) {
    MoveOperation::check_pair(*route.operation, source_class, destination_class);
  }
  if (autograd::is_grad_enabled() && tensor->requires_grad()) {
    request->node_ = std::make_shared<MoveNode>(
        autograd::gradient_edge(*tensor), source.carrier, source.layout, destination,
        capture_reverse_route(source_class, destination_class));
  }

  const int64_t cosize = source.layout.size() == 0 ? 0 : source.layout.cosize();
  const int64_t slots = destination->slots();
  const bool allocate = slots < cosize;
  if (allocate && slots != 0) {
    throw ValueError("move: the destination " + destination->label() + " holds " +
                     std::to_string(slots) + " slots, fewer than the layout's cosize " +
                     std::to_string(cosize) + ", and only an empty carrier can allocate");
  }
  // Both carriers are pinned before any caller's hook runs (a Python move
  // operation's instantiation, a provider's prepare): a hook that tries to
  // release, move, write or take ownership of either fails at that call with
  // the pin named, so what was validated above still holds when the hook
  // returns. A failure from here on ends both pins (the request's leases).
  request->name_ = "move #" + std::to_string(next_move_id++);
  request->source_lease_.emplace(source.carrier->pin(request->name_));
  request->destination_lease_.emplace(
      destination->pin(request->name_, Carrier::PinAccess::kWriting));
  RequestsInFlight::add(request.get());
  request->in_flight_ = true;

  std::shared_ptr<MoveOperation> operation;
  if (route.route == nullptr) {
    operation = route.operation->make_operation();
  }
  const autograd::GradModeGuard provider_records_nothing(false);
  move_fault_point(MoveStage::kValidation);

  MoveTransfer& transfer = request->transfer_;
  transfer = MoveTransfer{.route = route.route,
                          .tensor = tensor,
                          .source = source.carrier,
                          .destination = destination,
                          .offset = source.offset,
                          .element_count = cosize,
                          .source_alignment = source.carrier->io_alignment(),
                          .source_block_size = source.carrier->io_block_size(),
                          .destination_alignment = destination->io_alignment(),
                          .destination_block_size = destination->io_block_size()};
  if (route.route != nullptr) {
    request->prepared_ = route.route->provider->prepare(transfer);
    if (request->prepared_ == nullptr) {
      throw TypeError("move: " + request->transfer_name() + " prepared nothing");
    }
  } else {
    request->prepared_ = std::move(operation);
  }
  move_fault_point(MoveStage::kRoutePreparation);

  // A staging transfer allocates storage of its own; the destination receives
  // it at the commit.
  const bool stages = request->prepared_->stages_destination();
  const bool allocates = allocate && !stages;
  allocation_stage(*request->destination_lease_, allocates, cosize,
                   allocates && fills_every_slot(*request->prepared_, source.layout));

  transfer.source_lease = &*request->source_lease_;
  transfer.destination_lease = &*request->destination_lease_;
  // Made at the commit when staged: the destination holds no slots yet.
  if (!stages) transfer.output = Tensor::make(destination, source.layout, 0);
  if (stages) transfer.staged = &request->staged_;
  move_fault_point(MoveStage::kSubmission);
  request->profile_ = std::move(profile);
  request->profile_.submitted(
      route.route != nullptr ? route.route->route_id : route.operation->name(), request->name_,
      *tensor, *destination);
  if (request->prepared_->runs_on_worker() || source.carrier->has_foreign_storage() ||
      destination->has_foreign_storage()) {
    process_pool().submit([request] { request->run(); });
  } else {
    request->run();
  }
  return request;
}

void MoveRequest::run() noexcept {
  {
    // Outlives start(): a transfer that throws without reporting fails the
    // move with its exception, not with the report of a dropped completion.
    const TransferDone done(std::make_shared<TransferDone::State>(shared_from_this()));
    try {
      const RunningTransfer running(transfer_);
      prepared_->start(transfer_, done);
    } catch (...) {
      report(std::current_exception());
    }
  }
  arrive();  // start returned
}

void MoveRequest::report(std::exception_ptr error) noexcept {
  if (reported_.exchange(true)) return;
  outcome_ = std::move(error);
  arrive();  // done
}

void MoveRequest::arrive() noexcept {
  if (pending_parties_.fetch_sub(1, std::memory_order_acq_rel) == 1) commit(std::move(outcome_));
}

void MoveRequest::commit(std::exception_ptr error) noexcept {
  if (error == nullptr) {
    try {
      move_fault_point(MoveStage::kCompletion);
      validate_result();
      // Durable before the terminal commit publishes it; a staged value is
      // synchronized once installed, below.
      if (staged_ == nullptr) destination_lease_->sync();
      move_fault_point(MoveStage::kResultValidation);
    } catch (...) {
      error = std::current_exception();
    }
  }
  if (error == nullptr) {
    try {
      if (staged_ != nullptr) {
        std::exchange(staged_, nullptr)->install(*destination_lease_);
        destination_lease_->sync();
      }
      if (transfer_.output == nullptr) {
        transfer_.output =
            Tensor::make(transfer_.destination, transfer_.tensor->subtensor("move").layout, 0);
      }
      destination_lease_->commit_move();  // no mutation, whatever the transfer wrote
      source_lease_->release();
      prepared_.reset();
      if (node_ != nullptr) transfer_.output->set_grad_fn(std::move(node_));
      profile_.completed();
      completion_.succeed(transfer_.output);
      return;
    } catch (...) {
      error = std::current_exception();
    }
  }
  staged_.reset();  // a staged value never reaches the destination of a failed move
  destination_lease_->end();
  source_lease_->end();
  prepared_.reset();
  profile_.completed();
  completion_.fail(std::move(error));
}

std::string MoveRequest::transfer_name() const {
  if (route_.route == nullptr) return "the move operation " + route_.operation->name();
  return "the provider of route '" + route_.route->route_id + "' from " +
         route_.route->source->name() + " to " + route_.route->destination->name();
}

void MoveRequest::validate_result() const {
  const Carrier& destination = *transfer_.destination;
  const int64_t slots = staged_ != nullptr ? staged_->slots() : destination.slots();
  if (destination.is_released() || slots < transfer_.element_count) {
    throw RuntimeError("move: after " + name_ + "'s transfer the destination " +
                       destination.label() + " does not hold the " +
                       std::to_string(transfer_.element_count) + " slots of the result");
  }
}

// TransferDone ------------------------------------------------------------------

class TransferDone::State {
 public:
  explicit State(std::shared_ptr<MoveRequest> request) : request_(std::move(request)) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  // Reports a drop, which the request ignores when an outcome was reported
  // (a transfer whose start() threw reported that exception through run(),
  // which still holds this state's last copy afterwards).
  ~State() {
    const std::shared_ptr<MoveRequest> request = take();
    if (request != nullptr && !request->reported_.load()) {
      request->report(std::make_exception_ptr(
          RuntimeError("move: " + request->transfer_name() + " dropped the transfer of " +
                       request->name() + " without reporting its outcome")));
    }
  }

  void report(std::exception_ptr error) {
    if (std::shared_ptr<MoveRequest> request = take()) request->report(std::move(error));
  }

 private:
  std::shared_ptr<MoveRequest> take() {
    std::lock_guard lock(mu_);
    return std::move(request_);
  }

  std::mutex mu_;
  std::shared_ptr<MoveRequest> request_;  // until the first report
};

void TransferDone::operator()(std::exception_ptr error) const { state_->report(std::move(error)); }

}  // namespace strideweave
