#include "strideweave/move/legacy_registry.h"

#include <string>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::string pair_name(const ClassDescriptor& source, const ClassDescriptor& destination) {
  return "(" + source.name() + ", " + destination.name() + ")";
}

}  // namespace

void LegacyMoveRegistry::require_legacy_pair(const char* call, const ClassDescriptor& source,
                                             const ClassDescriptor& destination) {
  for (const auto& [role, cls] :
       {std::pair{"source_class", &source}, std::pair{"destination_class", &destination}}) {
    if (cls->kind() != DescriptorKind::kCarrier) {
      throw TypeError(std::string(call) + ": " + role + " " + cls->name() + " is a " +
                      kind_name(cls->kind()) + " class, not a Carrier subclass");
    }
  }
  for (const ClassDescriptor* cls : {&source, &destination}) {
    if (cls->seal() == ClassDescriptor::Definition::kBacked) {
      throw RuntimeError(std::string(call) + ": " + cls->name() +
                         " has a CarrierDefinition, so the legacy registry does not serve " +
                         pair_name(source, destination) +
                         "; express its movement with a TransferRoute in that definition");
    }
  }
}

void LegacyMoveRegistry::add(const ClassDescriptor& source, const ClassDescriptor& destination,
                             const ClassDescriptor& operation) {
  require_legacy_pair("register_move_operation", source, destination);
  if (operation.kind() != DescriptorKind::kMoveOperation) {
    throw TypeError("register_move_operation: operation_class " + operation.name() + " is a " +
                    kind_name(operation.kind()) + " class, not a MoveOperation subclass");
  }
  std::lock_guard lock(mu_);
  const auto [it, added] = entries_.try_emplace(Key{&source, &destination}, &operation);
  if (!added) {
    throw ValueError("register_move_operation: the pair " + pair_name(source, destination) +
                     " already has the move operation " + it->second->name());
  }
}

const ClassDescriptor& LegacyMoveRegistry::remove(const ClassDescriptor& source,
                                                  const ClassDescriptor& destination) {
  require_legacy_pair("unregister_move_operation", source, destination);
  std::lock_guard lock(mu_);
  const auto it = entries_.find(Key{&source, &destination});
  if (it == entries_.end()) {
    throw KeyError("unregister_move_operation: the pair " + pair_name(source, destination) +
                   " has no registered move operation");
  }
  const ClassDescriptor& removed = *it->second;
  entries_.erase(it);
  return removed;
}

const ClassDescriptor* LegacyMoveRegistry::find(const ClassDescriptor& source,
                                                const ClassDescriptor& destination) const {
  require_legacy_pair("dispatch_move", source, destination);
  std::lock_guard lock(mu_);
  const auto it = entries_.find(Key{&source, &destination});
  return it == entries_.end() ? nullptr : it->second;
}

}  // namespace strideweave
