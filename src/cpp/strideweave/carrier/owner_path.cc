#include "strideweave/carrier/owner_path.h"

namespace strideweave {

Carrier::WritePath OwnerPath::path() const {
  return Carrier::WritePath{Carrier::WritePath::Kind::kOwner, 0, owner_};
}

void OwnerPath::write(int64_t slot, const Value& value) { owned_->write_via(path(), slot, value); }

void OwnerPath::write_range(int64_t first, std::span<const std::byte> in) {
  owned_->write_range_via(path(), first, in);
}

void OwnerPath::write_range_values(int64_t first, std::span<const Value> values) {
  owned_->write_range_values_via(path(), first, values);
}

void OwnerPath::allocate(int64_t n) { owned_->allocate_via(path(), n); }

void OwnerPath::release() { owned_->release_via(path()); }

}  // namespace strideweave
