#include "strideweave/move/carrier_definition.h"

#include <algorithm>
#include <utility>

#include "strideweave/util/error.h"

namespace strideweave {

void validate_route(const TransferRoute& route) {
  const std::string named = "TransferRoute '" + route.route_id + "'";
  for (const auto& [side, cls] :
       {std::pair{"source", route.source}, std::pair{"destination", route.destination}}) {
    if (cls == nullptr || cls->kind() != DescriptorKind::kCarrier) {
      throw TypeError(named + " needs a Carrier subclass as its " + side + " class");
    }
  }
  if (route.route_id.empty()) {
    throw ValueError("TransferRoute from " + route.source->name() + " to " +
                     route.destination->name() + " has an empty route_id");
  }
  if (route.provider == nullptr) throw ValueError(named + " has no provider");
}

CarrierDefinition::CarrierDefinition(const ClassDescriptor& carrier_class,
                                     std::vector<TransferRoute> routes, bool elementwise_fallback)
    : carrier_class_(carrier_class),
      routes_(std::move(routes)),
      elementwise_fallback_(elementwise_fallback) {
  if (carrier_class.kind() != DescriptorKind::kCarrier) {
    throw TypeError("CarrierDefinition: " + carrier_class.name() + " is a " +
                    kind_name(carrier_class.kind()) + " class, not a Carrier subclass");
  }
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    const TransferRoute& route = routes_[i];
    validate_route(route);
    const std::string named =
        "CarrierDefinition of " + carrier_class.name() + ": route '" + route.route_id + "'";
    if (route.source != &carrier_class) {
      throw ValueError(named + " starts at " + route.source->name() +
                       ", not at the class the definition belongs to");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (routes_[j].route_id == route.route_id) throw ValueError(named + " is declared twice");
      if (routes_[j].destination == route.destination) {
        throw ValueError(named + " leads to " + route.destination->name() + ", which route '" +
                         routes_[j].route_id + "' already serves");
      }
    }
  }
}

const TransferRoute* CarrierDefinition::route_to(
    const ClassDescriptor& destination) const noexcept {
  const auto it = std::find_if(routes_.begin(), routes_.end(), [&](const TransferRoute& r) {
    return r.destination == &destination;
  });
  return it == routes_.end() ? nullptr : &*it;
}

}  // namespace strideweave
