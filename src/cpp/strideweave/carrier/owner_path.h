// OwnerPath: the private write path of a carrier's owner (spec/carrier-storage,
// "An owner writes its owned carriers…"), the third of the paths that write
// slots (carrier.h's file comment).
//
// Ownership is the carrier's own state (Carrier::take_ownership, relinquish,
// owner); Carrier::owner_path hands out this path, through which a composite
// carrier (compose/) writes, allocates and releases its parts. It is neither a
// pin nor tied to an operation, so it has a header of its own, apart from the
// lease (lease.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "strideweave/carrier/carrier.h"
#include "strideweave/dtype/value.h"

namespace strideweave {

// The private write path of a carrier's owner (composite carriers write their
// parts through it). Writes refuse a released, constructed-immutable or
// pinned carrier, and a carrier the owner no longer owns; they count in the
// version like the public entry points.
class OwnerPath {
 public:
  void write(int64_t slot, const Value& value);
  void write_range(int64_t first, std::span<const std::byte> in);
  void write_range_values(int64_t first, std::span<const Value> values);
  // Carrier::allocate through the path, with its errors.
  void allocate(int64_t n);
  // Carrier::release through the path: idempotent on a released carrier;
  // throws RuntimeError naming the carrier and the operation holding the pin
  // while pinned, and when the owner no longer owns it. The ownership stays.
  void release();

 private:
  friend class Carrier;
  OwnerPath(const Carrier& owner, std::shared_ptr<Carrier> owned)
      : owner_(&owner), owned_(std::move(owned)) {}
  Carrier::WritePath path() const;

  const Carrier* owner_;
  std::shared_ptr<Carrier> owned_;
};

}  // namespace strideweave
