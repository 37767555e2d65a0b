#include "strideweave/carrier/class_descriptor.h"

#include <mutex>
#include <string>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::atomic<uint64_t> next_class_id{1};

void require_parent(const std::string& name, const ClassDescriptor* parent, DescriptorKind kind) {
  if (parent != nullptr && parent->kind() != kind) {
    throw ValueError(std::string("the ") + kind_name(kind) + " class " + name +
                     " cannot derive from the " + kind_name(parent->kind()) + " class " +
                     parent->name());
  }
}

}  // namespace

const char* kind_name(DescriptorKind kind) noexcept {
  return kind == DescriptorKind::kCarrier ? "carrier" : "move operation";
}

ClassDescriptor::ClassDescriptor(DescriptorKind kind, std::string name,
                                 const ClassDescriptor* parent, Definition definition,
                                 const ClassDescriptor* source, const ClassDescriptor* destination,
                                 OperationMaker maker)
    : kind_(kind),
      name_(std::move(name)),
      parent_(parent),
      id_(next_class_id++),
      definition_state_(definition),
      pinned_source_(source),
      pinned_destination_(destination),
      maker_(maker) {}

std::unique_ptr<ClassDescriptor> ClassDescriptor::carrier(std::string name,
                                                          const ClassDescriptor* parent,
                                                          Definition definition) {
  require_parent(name, parent, DescriptorKind::kCarrier);
  if (definition == Definition::kBacked) {
    throw ValueError("the carrier class " + name +
                     " cannot be created definition-backed without its definition");
  }
  return std::unique_ptr<ClassDescriptor>(new ClassDescriptor(
      DescriptorKind::kCarrier, std::move(name), parent, definition, nullptr, nullptr, nullptr));
}

std::unique_ptr<ClassDescriptor> ClassDescriptor::move_operation(std::string name,
                                                                 const ClassDescriptor* parent,
                                                                 const ClassDescriptor* source,
                                                                 const ClassDescriptor* destination,
                                                                 OperationMaker maker) {
  require_parent(name, parent, DescriptorKind::kMoveOperation);
  for (const ClassDescriptor* end : {source, destination}) {
    if (end != nullptr && end->kind() != DescriptorKind::kCarrier) {
      throw ValueError("the move operation class " + name + " cannot pin the " +
                       kind_name(end->kind()) + " class " + end->name() + " as a carrier class");
    }
  }
  return std::unique_ptr<ClassDescriptor>(
      new ClassDescriptor(DescriptorKind::kMoveOperation, std::move(name), parent,
                          Definition::kFree, source, destination, maker));
}

std::shared_ptr<MoveOperation> ClassDescriptor::make_operation() const {
  if (maker_ == nullptr) {
    throw TypeError("the " + std::string(kind_name(kind_)) + " class " + name_ +
                    " makes no move operation");
  }
  return maker_(*this);
}

bool ClassDescriptor::is_subclass_of(const ClassDescriptor& other) const noexcept {
  for (const ClassDescriptor* c = this; c != nullptr; c = c->parent_) {
    if (c == &other) return true;
  }
  return false;
}

ClassDescriptor::Definition ClassDescriptor::seal() const noexcept {
  Definition expected = Definition::kOpen;
  definition_state_.compare_exchange_strong(expected, Definition::kFree);
  return definition_state_.load();
}

void ClassDescriptor::define(std::shared_ptr<const CarrierDefinition> definition) const {
  if (kind_ != DescriptorKind::kCarrier) {
    throw TypeError("the move operation class " + name_ + " cannot have a CarrierDefinition");
  }
  if (definition == nullptr) {
    throw ValueError("a CarrierDefinition for " + name_ + " is required, not null");
  }
  static std::mutex defining;  // serializes define() calls; seal() needs no lock
  std::lock_guard lock(defining);
  if (definition_state_.load() != Definition::kOpen) {
    throw RuntimeError("the carrier class " + name_ + " is sealed " +
                       (definition_state_.load() == Definition::kBacked
                            ? std::string("with a CarrierDefinition")
                            : std::string("definition-free: it already took part in dispatch "
                                          "or a registry call")) +
                       ", so it cannot be given a CarrierDefinition");
  }
  definition_ = std::move(definition);
  Definition expected = Definition::kOpen;
  if (!definition_state_.compare_exchange_strong(expected, Definition::kBacked,
                                                 std::memory_order_acq_rel)) {
    definition_.reset();
    throw RuntimeError("the carrier class " + name_ +
                       " was sealed definition-free while it was being defined");
  }
}

const ClassDescriptor& builtin_carrier_class(std::string name, const ClassDescriptor* parent) {
  return *ClassDescriptor::carrier(std::move(name), parent, ClassDescriptor::Definition::kFree)
              .release();
}

}  // namespace strideweave
