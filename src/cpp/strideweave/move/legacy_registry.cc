#include "strideweave/move/legacy_registry.h"

#include <string>

#include "strideweave/carrier/block_device.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/metal.h"
#include "strideweave/move/metal_move_operation.h"
#include "strideweave/move/move_operation.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::string pair_name(const ClassDescriptor& source, const ClassDescriptor& destination) {
  return "(" + source.name() + ", " + destination.name() + ")";
}

}  // namespace

LegacyMoveRegistry& LegacyMoveRegistry::global() {
  static LegacyMoveRegistry& registry = []() -> LegacyMoveRegistry& {
    auto* created = new LegacyMoveRegistry();
    created->add(CPU::static_class(), FileBacked::static_class(),
                 CpuToFileBackedMoveOperation::static_class());
    created->add(FileBacked::static_class(), CPU::static_class(),
                 FileBackedToCpuMoveOperation::static_class());
    created->add(CPU::static_class(), BlockDeviceCarrier::static_class(),
                 CpuToBlockDeviceMoveOperation::static_class());
    created->add(BlockDeviceCarrier::static_class(), CPU::static_class(),
                 BlockDeviceToCpuMoveOperation::static_class());
    created->add(CPU::static_class(), Metal::static_class(),
                 CpuToMetalMoveOperation::static_class());
    created->add(Metal::static_class(), CPU::static_class(),
                 MetalToCpuMoveOperation::static_class());
    created->add(Metal::static_class(), Metal::static_class(),
                 MetalToMetalMoveOperation::static_class());
    return *created;
  }();
  return registry;
}

void LegacyMoveRegistry::require_legacy_pair(const char* call, const ClassDescriptor& source,
                                             const ClassDescriptor& destination,
                                             const ClassDescriptor* operation) {
  for (const auto& [role, cls] :
       {std::pair{"source_class", &source}, std::pair{"destination_class", &destination}}) {
    if (cls->kind() != DescriptorKind::kCarrier) {
      throw TypeError(std::string(call) + ": " + role + " " + cls->name() + " is a " +
                      kind_name(cls->kind()) + " class, not a Carrier subclass");
    }
  }
  if (operation != nullptr && operation->kind() != DescriptorKind::kMoveOperation) {
    throw TypeError(std::string(call) + ": operation_class " + operation->name() + " is a " +
                    kind_name(operation->kind()) + " class, not a MoveOperation subclass");
  }
  // Both classes are sealed before either is checked, so a refused call
  // seals them alike.
  const ClassDescriptor::Definition states[] = {source.seal(), destination.seal()};
  for (const auto& [cls, state] :
       {std::pair{&source, states[0]}, std::pair{&destination, states[1]}}) {
    if (state == ClassDescriptor::Definition::kBacked) {
      throw RuntimeError(std::string(call) + ": " + cls->name() +
                         " has a CarrierDefinition, so the legacy registry does not serve " +
                         pair_name(source, destination) +
                         "; express its movement with a TransferRoute in that definition");
    }
  }
}

void LegacyMoveRegistry::require_no_entry(const Key& key) const {
  const auto it = entries_.find(key);
  if (it != entries_.end()) {
    throw ValueError("register_move_operation: the pair " + pair_name(*key.first, *key.second) +
                     " already has the move operation " + it->second->name());
  }
}

void LegacyMoveRegistry::add(const ClassDescriptor& source, const ClassDescriptor& destination,
                             const ClassDescriptor& operation) {
  require_legacy_pair("register_move_operation", source, destination, &operation);
  const Key key{&source, &destination};
  std::lock_guard lock(mu_);
  require_no_entry(key);
  entries_.emplace(key, &operation);
}

void LegacyMoveRegistry::check_add(const ClassDescriptor& source,
                                   const ClassDescriptor& destination,
                                   const ClassDescriptor& operation) const {
  require_legacy_pair("register_move_operation", source, destination, &operation);
  std::lock_guard lock(mu_);
  require_no_entry(Key{&source, &destination});
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

const ClassDescriptor& LegacyMoveRegistry::dispatch(const ClassDescriptor& source,
                                                    const ClassDescriptor& destination) const {
  const ClassDescriptor* registered = find(source, destination);
  return registered != nullptr ? *registered : ElementwiseMoveOperation::static_class();
}

}  // namespace strideweave
