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
#include "strideweave/move/transfer.h"

namespace strideweave {

// Implements a route's transfer mechanics. It does not decide validation,
// source release, completion or publication: the move does.
class TransferProvider {
 public:
  virtual ~TransferProvider() = default;

  // Evaluates `request` (validated and sized: the first group of
  // MoveTransfer's members; its leases and output are not set yet) against
  // the provider's constraints and returns what will run the transfer, or
  // throws to refuse it (the exception reaches move_async's caller directly,
  // before any pin, allocation or submission). Called on the initiating
  // thread, holding no core lock.
  virtual std::shared_ptr<PreparedTransfer> prepare(const MoveTransfer& request) = 0;
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

}  // namespace strideweave
