#include "strideweave/carrier/carrier.h"

#include <algorithm>

#include "strideweave/layout/spans.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {
std::atomic<uint64_t> next_carrier_id{1};
}  // namespace

bool VersionToken::is_current() const {
  const std::shared_ptr<const Carrier> carrier = carrier_.lock();
  return carrier != nullptr && carrier->version() == version_;
}

Carrier::Carrier(DType dtype, bool mutable_)
    : dtype_(std::move(dtype)), id_(next_carrier_id++), constructed_mutable_(mutable_) {}

Carrier::~Carrier() {
  // Carriers this one owned outlive it unowned.
  for (const std::shared_ptr<Carrier>& owned : owned_carriers_) {
    std::lock_guard lock(owned->mu_);
    owned->owner_.reset();
    owned->owned_ = false;
  }
}

const CarrierClass& Carrier::static_class() {
  static const CarrierClass descriptor("Carrier", nullptr);
  return descriptor;
}

int64_t Carrier::slots() const {
  std::lock_guard lock(mu_);
  return slots_;
}

std::string Carrier::label() const {
  return carrier_class().name() + " carrier #" + std::to_string(id_);
}

void Carrier::require_live_locked(const char* operation) const {
  if (released_) {
    throw RuntimeError(std::string(operation) + " on " + label() + ", which is released");
  }
}

void Carrier::require_publicly_mutable_locked(const char* operation) const {
  require_live_locked(operation);
  if (!constructed_mutable_) {
    throw RuntimeError(std::string(operation) + " on " + label() +
                       ", which was constructed immutable");
  }
  if (const std::shared_ptr<Carrier> owner = owner_.lock()) {
    throw RuntimeError(std::string(operation) + " on " + label() + ", which is owned by " +
                       owner->label());
  }
}

void Carrier::require_slot_locked(int64_t slot) const {
  if (slot < 0 || slot >= slots_) {
    throw IndexError("slot " + std::to_string(slot) + " is out of range for " + label() + " with " +
                     std::to_string(slots_) + " slots");
  }
}

Value Carrier::read(int64_t slot) const {
  std::lock_guard lock(mu_);
  require_live_locked("read");
  require_slot_locked(slot);
  return do_read(slot);
}

void Carrier::gather(const Layout& layout, int64_t offset, std::byte* dst) const {
  if (!dtype_.itemsize()) {
    throw TypeError("gather on " + label() + ": the abstract dtype " + dtype_.name() +
                    " has no encoding");
  }
  std::lock_guard lock(mu_);
  require_live_locked("gather");
  if (layout.size() == 0) return;
  if (offset < 0 || offset > slots_ || layout.cosize() > slots_ - offset) {
    throw IndexError("gather window [" + std::to_string(offset) + ", " + std::to_string(offset) +
                     " + " + std::to_string(layout.cosize()) + ") exceeds the " +
                     std::to_string(slots_) + " slots of " + label());
  }
  do_gather(layout, offset, dst);
}

void Carrier::do_gather(const Layout& layout, int64_t offset, std::byte* dst) const {
  const std::size_t itemsize = *dtype_.itemsize();
  for_each_span(layout, [&](int64_t first, int64_t count, int64_t step) {
    for (int64_t k = 0; k < count; ++k) {
      encode(dtype_, do_read(offset + first + k * step), dst);
      dst += itemsize;
    }
  });
}

void Carrier::write(int64_t slot, const Value& value) {
  std::lock_guard lock(mu_);
  require_publicly_mutable_locked("write");
  require_slot_locked(slot);
  do_write(slot, coerce(dtype_, value));
  ++version_;
}

void Carrier::allocate(int64_t n) {
  std::lock_guard lock(mu_);
  require_publicly_mutable_locked("allocate");
  if (n < 0) throw ValueError("allocate: slot count " + std::to_string(n) + " is negative");
  if (!supports_allocation()) {
    throw RuntimeError("allocate: " + carrier_class().name() + " does not support allocation");
  }
  if (slots_ != 0) {
    throw RuntimeError("allocate on " + label() + ", which already holds " +
                       std::to_string(slots_) + " slots");
  }
  do_allocate(n);
  slots_ = n;
  ++version_;
}

void Carrier::initialize_slots(int64_t n) {
  std::lock_guard lock(mu_);
  slots_ = n;
}

VersionToken Carrier::version_token() const {
  return VersionToken(weak_from_this(), id_, version_.load());
}

void Carrier::release() {
  std::lock_guard lock(mu_);
  if (released_) return;
  do_release();
  released_ = true;
  slots_ = 0;
}

bool Carrier::is_released() const { return released_.load(); }

bool Carrier::is_mutable() const {
  return !released_.load() && constructed_mutable_ && !owned_.load();
}

std::shared_ptr<Carrier> Carrier::owner() const {
  std::lock_guard lock(mu_);
  return owner_.lock();
}

void Carrier::take_ownership(Carrier& other) {
  if (&other == this) throw ValueError(label() + " cannot take ownership of itself");
  std::scoped_lock lock(mu_, other.mu_);
  if (other.released_) {
    throw RuntimeError(label() + " cannot take ownership of " + other.label() +
                       ", which is released");
  }
  if (const std::shared_ptr<Carrier> current = other.owner_.lock()) {
    throw RuntimeError(label() + " cannot take ownership of " + other.label() +
                       ", which is owned by " + current->label());
  }
  other.owner_ = weak_from_this();
  other.owned_ = true;
  owned_carriers_.push_back(other.shared_from_this());
}

void Carrier::relinquish(Carrier& other) {
  std::scoped_lock lock(mu_, other.mu_);
  const auto it =
      std::find_if(owned_carriers_.begin(), owned_carriers_.end(),
                   [&](const std::shared_ptr<Carrier>& c) { return c.get() == &other; });
  if (it == owned_carriers_.end()) {
    throw ValueError(label() + " does not own " + other.label());
  }
  other.owner_.reset();
  other.owned_ = false;
  owned_carriers_.erase(it);
}

int64_t initial_slot_count(const char* carrier, std::optional<int64_t> n,
                           const std::optional<std::vector<Value>>& values) {
  if (n && *n < 0) {
    throw ValueError(std::string(carrier) + ": slot count n=" + std::to_string(*n) +
                     " is negative");
  }
  if (values) {
    const auto count = static_cast<int64_t>(values->size());
    if (n && *n != count) {
      throw ValueError(std::string(carrier) + ": n=" + std::to_string(*n) + " disagrees with the " +
                       std::to_string(count) + " values given");
    }
    return count;
  }
  return n.value_or(0);
}

DLPackInfo Carrier::dlpack_info() const {
  throw BufferError(carrier_class().name() + " does not support DLPack export");
}

}  // namespace strideweave
