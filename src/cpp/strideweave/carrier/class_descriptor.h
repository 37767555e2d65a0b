// Runtime descriptors of exact classes (spec/carrier-storage).
//
// Dispatch in the specs is by exact class: the move registry keys on the
// (source, destination) pair of carrier classes, and a move operation class
// may pin the pair it supports. Every carrier class and every move-operation
// class, C++ built-in or Python subclass, has one ClassDescriptor for the
// life of the process; registries key on descriptors, never on C++ typeid and
// never on Python objects. A descriptor's address is its identity.
//
// A carrier class descriptor also holds the class's definition state
// (ARCHITECTURE.md, "Definition sealing"): open until the class first takes
// part in dispatch or a registry call, then sealed either definition-free
// (the legacy registry serves it) or definition-backed (its
// CarrierDefinition owns its routes). Built-in carrier classes are created
// sealed definition-free.
//
// Thread safety: every member may be called from any thread; a descriptor
// is immutable apart from its definition state, which changes atomically.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace strideweave {

// The routes and fallback policy of a definition-backed carrier class
// (spec/interop-movement), defined with movement.
class CarrierDefinition;
// The root of the move-operation classes (move/move_operation.h).
class MoveOperation;

enum class DescriptorKind { kCarrier, kMoveOperation };

// "carrier" or "move operation".
const char* kind_name(DescriptorKind kind) noexcept;

class ClassDescriptor {
 public:
  enum class Definition {
    kOpen,    // not yet sealed: a definition may still be given
    kFree,    // sealed definition-free
    kBacked,  // sealed with a CarrierDefinition
  };

  // A carrier class named `name` whose parent is `parent` (nullptr only for
  // the root Carrier). A built-in is created sealed definition-free
  // (`definition` kFree); a Python subclass open (kOpen). Throws ValueError
  // when `parent` is not a carrier class descriptor or `definition` is kBacked
  // (a definition is given through define()).
  static std::unique_ptr<ClassDescriptor> carrier(std::string name, const ClassDescriptor* parent,
                                                  Definition definition);

  // What makes a new instance of a move-operation class: given the class's
  // own descriptor, so that one function serves every Python subclass.
  using OperationMaker = std::shared_ptr<MoveOperation> (*)(const ClassDescriptor& operation);

  // A move-operation class named `name` whose parent is `parent` (nullptr
  // only for the root MoveOperation), pinned to the exact carrier classes
  // `source` and `destination` where given (nullptr: that side accepts any
  // class), whose instances `maker` makes (make_operation; none when null): a built-in's
  // static maker, or for a Python subclass the binding's, which instantiates
  // the Python class. The caller resolves inheritance (a Python subclass
  // inherits its base's pins as class attributes). Throws ValueError when
  // `parent` is not a move-operation descriptor or a pinned class is not a
  // carrier class.
  static std::unique_ptr<ClassDescriptor> move_operation(std::string name,
                                                         const ClassDescriptor* parent,
                                                         const ClassDescriptor* source,
                                                         const ClassDescriptor* destination,
                                                         OperationMaker maker = nullptr);

  ClassDescriptor(const ClassDescriptor&) = delete;
  ClassDescriptor& operator=(const ClassDescriptor&) = delete;

  DescriptorKind kind() const noexcept { return kind_; }
  const std::string& name() const noexcept { return name_; }
  const ClassDescriptor* parent() const noexcept { return parent_; }

  // A process-unique number, for stable ordering and hashing.
  uint64_t id() const noexcept { return id_; }

  // True when this descriptor is `other` or one of its descendants.
  bool is_subclass_of(const ClassDescriptor& other) const noexcept;

  // Carrier classes: the definition state and the definition (nullptr unless
  // kBacked). Move-operation classes report kFree and nullptr.
  Definition definition_state() const noexcept { return definition_state_.load(); }
  const CarrierDefinition* definition() const noexcept {
    return definition_state_.load(std::memory_order_acquire) == Definition::kBacked
               ? definition_.get()
               : nullptr;
  }

  // Makes an open carrier class definition-backed by `definition` (non-null).
  // Throws TypeError for a move-operation class, and RuntimeError naming the
  // class when it is sealed (it took part in dispatch or a registry call, or
  // already has a definition): sealing is final, so dispatch never changes
  // under a caller. Races with seal(): exactly one of them wins.
  void define(std::shared_ptr<const CarrierDefinition> definition) const;

  // Seals an open carrier class definition-free; a sealed class keeps its
  // state. Returns the state after the call. The first dispatch or registry
  // call naming the class makes this call.
  Definition seal() const noexcept;

  // Move-operation classes: the exact carrier class each side is pinned to,
  // or nullptr for a side that accepts any class. Carrier classes: nullptr.
  const ClassDescriptor* pinned_source() const noexcept { return pinned_source_; }
  const ClassDescriptor* pinned_destination() const noexcept { return pinned_destination_; }

  // Move-operation classes: a new instance of this exact class, made by the
  // class's maker (a move makes one per request, a lowered transfer one per
  // edge). Throws TypeError naming the class for a class without a maker (a
  // carrier class, or a move-operation class created without one), and
  // whatever the maker throws.
  std::shared_ptr<MoveOperation> make_operation() const;

 private:
  ClassDescriptor(DescriptorKind kind, std::string name, const ClassDescriptor* parent,
                  Definition definition, const ClassDescriptor* source,
                  const ClassDescriptor* destination, OperationMaker maker);

  DescriptorKind kind_;
  std::string name_;
  const ClassDescriptor* parent_;
  uint64_t id_;
  mutable std::atomic<Definition> definition_state_;
  // Written once, by the define() that seals the class kBacked, before the
  // state is published (release); read only after observing kBacked.
  mutable std::shared_ptr<const CarrierDefinition> definition_;
  const ClassDescriptor* pinned_source_;
  const ClassDescriptor* pinned_destination_;
  OperationMaker maker_;
};

// The static descriptor of a built-in carrier class: sealed definition-free
// and never destroyed (worker threads may still name it while the process
// exits). For the static_class() of built-ins only.
const ClassDescriptor& builtin_carrier_class(std::string name, const ClassDescriptor* parent);

}  // namespace strideweave
