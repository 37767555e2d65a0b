// CarrierDefinition and TransferRoute (spec/interop-movement, "Move routes are
// exact and definition-owned"): the outgoing routes an exact carrier class
// declares, each to one exact destination class, and whether the class
// permits the elementwise fallback for pairs without a route.
//
// A definition is immutable once constructed; ClassDescriptor::define
// installs it (sealing the class definition-backed).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "strideweave/carrier/class_descriptor.h"

namespace strideweave {

// Runs the transfers of a route. The base of every provider; its prepare
// protocol arrives with the request path that calls it.
class TransferProvider {
 public:
  virtual ~TransferProvider() = default;
};

struct TransferRoute {
  const ClassDescriptor* source = nullptr;       // the exact class owning the definition
  const ClassDescriptor* destination = nullptr;  // one exact destination class
  std::string route_id;                          // stable, non-empty, unique in the definition
  std::shared_ptr<TransferProvider> provider;    // non-null
};

class CarrierDefinition {
 public:
  // Throws TypeError when `carrier_class` or a route's destination is not a
  // carrier class, ValueError naming the route when its source is not
  // `carrier_class`, its route_id is empty or repeated, its destination
  // already has a route, or its provider is null.
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

}  // namespace strideweave
