#include "strideweave/carrier/lease.h"

#include <utility>
#include <vector>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {
// The (carrier, pin) admissions the calling thread holds (Lease::Admission).
thread_local std::vector<std::pair<const Carrier*, uint64_t>> admitted_pins;
}  // namespace

Lease::Lease(std::shared_ptr<Carrier> carrier, uint64_t pin_id, std::string operation)
    : carrier_(std::move(carrier)), pin_id_(pin_id), operation_(std::move(operation)) {}

Lease::Lease(Lease&& other) noexcept
    : carrier_(std::move(other.carrier_)),
      pin_id_(std::exchange(other.pin_id_, 0)),
      operation_(other.operation_) {}

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    end();
    carrier_ = std::move(other.carrier_);
    pin_id_ = std::exchange(other.pin_id_, 0);
    operation_ = other.operation_;
  }
  return *this;
}

Lease::~Lease() { end(); }

void Lease::end() noexcept {
  if (carrier_ == nullptr) return;
  carrier_->end_pin(pin_id_);
  carrier_.reset();
  pin_id_ = 0;
}

void Lease::release() {
  Carrier& pinned = carrier();
  pinned.release_pinned(pin_id_);
  carrier_.reset();
  pin_id_ = 0;
}

void Lease::mark_written() {
  Carrier& pinned = carrier();
  pinned.mark_pin_written(pin_id_);
}

void Lease::commit_move() {
  Carrier& pinned = carrier();
  pinned.commit_received_move(pin_id_);
  carrier_.reset();
  pin_id_ = 0;
}

void Lease::sync() {
  Carrier& pinned = carrier();
  std::lock_guard lock(pinned.mu_);
  pinned.require_live_locked(operation_.c_str());
  pinned.do_sync();
}

Lease::Admission::Admission(const Carrier* carrier, uint64_t pin_id) {
  admitted_pins.emplace_back(carrier, pin_id);
}

Lease::Admission::~Admission() { admitted_pins.pop_back(); }

bool Lease::Admission::held(const Carrier* carrier, uint64_t pin_id) noexcept {
  for (const auto& [admitted, pin] : admitted_pins) {
    if (admitted == carrier && pin == pin_id) return true;
  }
  return false;
}

Lease::Admission Lease::admit() const { return Admission(&carrier(), pin_id_); }

Carrier& Lease::carrier() const {
  if (carrier_ == nullptr) {
    throw RuntimeError("the lease of " + operation_ + " has ended");
  }
  return *carrier_;
}

void Lease::write(int64_t slot, const Value& value) {
  carrier().write_via(Carrier::WritePath{Carrier::WritePath::Kind::kLease, pin_id_, nullptr}, slot,
                      value);
}

void Lease::write_range(int64_t first, std::span<const std::byte> in) {
  carrier().write_range_via(Carrier::WritePath{Carrier::WritePath::Kind::kLease, pin_id_, nullptr},
                            first, in);
}

void Lease::write_range_values(int64_t first, std::span<const Value> values) {
  carrier().write_range_values_via(
      Carrier::WritePath{Carrier::WritePath::Kind::kLease, pin_id_, nullptr}, first, values);
}

void Lease::allocate(int64_t n) {
  carrier().allocate_via(Carrier::WritePath{Carrier::WritePath::Kind::kLease, pin_id_, nullptr}, n);
}

void Lease::allocate_for_overwrite(int64_t n) {
  carrier().allocate_via(Carrier::WritePath{Carrier::WritePath::Kind::kLease, pin_id_, nullptr}, n,
                         true);
}

}  // namespace strideweave
