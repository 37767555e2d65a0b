#include "strideweave/move/route.h"

#include <string>

#include "strideweave/move/legacy_registry.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/util/error.h"

namespace strideweave {

MoveRoute resolve_move_route(const ClassDescriptor& source, const ClassDescriptor& destination) {
  source.seal();
  destination.seal();
  const CarrierDefinition* from = source.definition();
  const CarrierDefinition* to = destination.definition();
  if (from == nullptr && to == nullptr) {
    return MoveRoute{nullptr, &LegacyMoveRegistry::global().dispatch(source, destination)};
  }
  if (from != nullptr) {
    if (const TransferRoute* route = from->route_to(destination)) return MoveRoute{route, nullptr};
  }
  const bool source_permits = from == nullptr || from->elementwise_fallback();
  const bool destination_permits = to == nullptr || to->elementwise_fallback();
  if (source_permits && destination_permits) {
    return MoveRoute{nullptr, &ElementwiseMoveOperation::static_class()};
  }
  std::string why = from == nullptr ? "the definition-free source class declares no routes"
                                    : "the CarrierDefinition of " + source.name() +
                                          " declares no route to exactly " + destination.name();
  why += ", and the elementwise fallback is not permitted by ";
  why += !source_permits && !destination_permits ? "either definition"
         : !source_permits                       ? "the definition of " + source.name()
                                                 : "the definition of " + destination.name();
  throw NotImplementedError("move: no transfer route from " + source.name() + " to " +
                            destination.name() + ": " + why);
}

}  // namespace strideweave
