// Runtime class descriptors of carrier classes (spec/carrier-storage).
//
// Dispatch in the specs is by exact class. Every carrier class, C++ built-in
// or Python subclass, has one CarrierClass for its whole life; registries
// key on descriptors, never on C++ typeid and never on Python objects.
#pragma once

#include <cstdint>
#include <string>

namespace strideweave {

class CarrierClass {
 public:
  // A descriptor named `name` whose parent is `parent` (nullptr for the root).
  // Descriptors are never copied: their address is their identity.
  CarrierClass(std::string name, const CarrierClass* parent);
  CarrierClass(const CarrierClass&) = delete;
  CarrierClass& operator=(const CarrierClass&) = delete;

  const std::string& name() const noexcept { return name_; }
  const CarrierClass* parent() const noexcept { return parent_; }

  // A process-unique number, for stable ordering and messages.
  uint64_t id() const noexcept { return id_; }

  // True when this descriptor is `other` or one of its descendants.
  bool is_subclass_of(const CarrierClass& other) const noexcept;

 private:
  std::string name_;
  const CarrierClass* parent_;
  uint64_t id_;
};

}  // namespace strideweave
