#include "strideweave/move/lowered.h"

#include <utility>

#include "strideweave/carrier/lease.h"
#include "strideweave/layout/layout.h"
#include "strideweave/move/carrier_definition.h"
#include "strideweave/move/legacy_registry.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

void require_definition_free(const char* purpose, const ClassDescriptor& carrier_class) {
  if (carrier_class.seal() == ClassDescriptor::Definition::kBacked) {
    throw TypeError(std::string(purpose) + ": " + carrier_class.name() +
                    " is definition-backed; its movement belongs to its TransferRoutes, so it "
                    "cannot be a part moved through the legacy registry");
  }
}

}  // namespace

std::shared_ptr<MoveOperation> lowered_operation(const char* purpose,
                                                 const ClassDescriptor& source_class,
                                                 const ClassDescriptor& destination_class,
                                                 const DType& dtype) {
  require_definition_free(purpose, source_class);
  require_definition_free(purpose, destination_class);
  const ClassDescriptor& operation_class =
      LegacyMoveRegistry::global().dispatch(source_class, destination_class);
  std::shared_ptr<MoveOperation> operation = operation_class.make_operation();
  try {
    operation->check_pair(source_class, destination_class);
  } catch (const TypeError& e) {
    throw TypeError(std::string(purpose) + ": the edge " + source_class.name() + " -> " +
                    destination_class.name() + " for " + dtype.name() + ": " + e.what());
  }
  if (!operation->supports_dtype(dtype)) {
    throw TypeError(std::string(purpose) + ": the edge " + source_class.name() + " -> " +
                    destination_class.name() + ": the move operation " + operation->name() +
                    " does not support " + dtype.name());
  }
  return operation;
}

void lowered_transfer(MoveOperation& operation, const std::string& name,
                      const std::shared_ptr<Carrier>& source, int64_t first, int64_t count,
                      const std::shared_ptr<Carrier>& destination) {
  if (source->dtype() != destination->dtype()) {
    throw ValueError(name + ": " + source->label() + " holds " + source->dtype().name() + " and " +
                     destination->label() + " holds " + destination->dtype().name());
  }
  const int64_t held = destination->slots();
  if (held != 0 && held < count) {
    throw ValueError(name + ": " + destination->label() + " holds " + std::to_string(held) +
                     " slots, fewer than the " + std::to_string(count) + " it receives");
  }
  // Validates the window (and the source's liveness) before anything is pinned.
  std::shared_ptr<const Tensor> tensor = Tensor::make(source, Layout(IntTuple(count)), first);
  Lease source_lease = source->pin(name);
  Lease destination_lease = destination->pin(name, Carrier::PinAccess::kWriting);
  // The copy hook fills every slot of the compact window (MoveOperation::copy),
  // and on failure the destination's slots are unspecified: no zeroing first.
  allocation_stage(destination_lease, held == 0 && count > 0, count, true);
  const MoveTransfer transfer{.tensor = std::move(tensor),
                              .source = source,
                              .destination = destination,
                              .offset = first,
                              .element_count = count,
                              .source_alignment = source->io_alignment(),
                              .source_block_size = source->io_block_size(),
                              .destination_alignment = destination->io_alignment(),
                              .destination_block_size = destination->io_block_size(),
                              .source_lease = &source_lease,
                              .destination_lease = &destination_lease,
                              .output = Tensor::make(destination, Layout(IntTuple(count)), 0)};
  run_copy_hook(operation, transfer);
  destination_lease.sync();
}

}  // namespace strideweave
