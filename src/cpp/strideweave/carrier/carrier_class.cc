#include "strideweave/carrier/carrier_class.h"

#include <atomic>

namespace strideweave {

namespace {
std::atomic<uint64_t> next_class_id{1};
}  // namespace

CarrierClass::CarrierClass(std::string name, const CarrierClass* parent)
    : name_(std::move(name)), parent_(parent), id_(next_class_id++) {}

bool CarrierClass::is_subclass_of(const CarrierClass& other) const noexcept {
  for (const CarrierClass* c = this; c != nullptr; c = c->parent_) {
    if (c == &other) return true;
  }
  return false;
}

}  // namespace strideweave
