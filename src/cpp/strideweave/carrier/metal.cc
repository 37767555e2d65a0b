#include "strideweave/carrier/metal.h"

#include <string>
#include <utility>

#include "strideweave/carrier/lease.h"
#include "strideweave/util/error.h"

namespace strideweave {

bool Metal::supports(const DType& dtype) noexcept {
  return dtype == DType::Float32() || dtype == DType::Int32() || dtype == DType::Bool();
}

void Metal::require_supported(const DType& dtype, const char* who) {
  if (!supports(dtype)) {
    throw TypeError(std::string(who) + " cannot hold " + dtype.name() +
                    ": the Metal device supports Float32, Int32 and Bool");
  }
}

const ClassDescriptor& Metal::static_class() {
  static const ClassDescriptor& descriptor =
      builtin_carrier_class("Metal", &Carrier::static_class());
  return descriptor;
}

Metal::Metal(DType dtype, std::optional<int64_t> n, std::optional<std::vector<Value>> values,
             bool mutable_)
    : Carrier(std::move(dtype), mutable_), queue_(&device::metal_queue()) {
  require_supported(this->dtype(), "Metal");
  itemsize_ = *this->dtype().itemsize();
  const int64_t count = initial_slot_count("Metal", n, values);
  std::vector<std::byte> encoded;
  if (values) {
    encoded.resize(values->size() * itemsize_);
    for (std::size_t i = 0; i < values->size(); ++i) {
      encode(this->dtype(), coerce(this->dtype(), (*values)[i]), encoded.data() + i * itemsize_);
    }
  }
  buffer_ = allocate_buffer(*queue_, this->dtype(), count);
  if (!encoded.empty()) {
    device::upload(*queue_, encoded.data(), buffer_, 0, static_cast<int64_t>(encoded.size()),
                   "Metal values")
        ->wait();
  }
  initialize_slots(count);
}

device::BufferRef Metal::allocate_buffer(device::Queue& queue, const DType& dtype, int64_t n,
                                         bool zeroed) {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(*dtype.itemsize()), &bytes)) {
    throw ValueError("Metal: " + std::to_string(n) + " slots of " + dtype.name() +
                     " need more bytes than a buffer can hold (at most 2**63 - 1)");
  }
  return queue.allocate(bytes, zeroed);
}

device::BufferRef Metal::allocate_storage(const DType& dtype, int64_t n) {
  require_supported(dtype, "Metal");
  if (n < 0) throw ValueError("Metal: cannot allocate " + std::to_string(n) + " slots");
  return allocate_buffer(device::metal_queue(), dtype, n, false);
}

void Metal::install(Lease& lease, device::BufferRef buffer, int64_t slots) {
  if (&lease.carrier() != this) {
    throw RuntimeError("Metal: " + lease.operation() + " installs storage in " + label() +
                       " through a lease of another carrier");
  }
  if (buffer == nullptr || slots < 0 || buffer->bytes() / static_cast<int64_t>(itemsize_) < slots) {
    throw ValueError("Metal: the device buffer installed in " + label() + " holds fewer than " +
                     std::to_string(slots) + " slots");
  }
  lease.install_locked(slots, [&] { buffer_.swap(buffer); });
  // `buffer` now holds the old one, dropped here, after the lock.
}

std::shared_ptr<Carrier> Metal::new_like() const { return std::make_shared<Metal>(dtype()); }

device::BufferRef Metal::buffer(const char* operation) const {
  std::lock_guard lock(mu_);
  require_live_locked(operation);
  return buffer_;
}

device::BufferRef Metal::buffer_for_read(const char* operation) const {
  std::lock_guard lock(mu_);
  require_readable_locked(operation);
  return buffer_;
}

Value Metal::do_read(int64_t slot) const {
  std::byte item[8];
  do_read_range(slot, 1, item);
  return decode(dtype(), item);
}

void Metal::do_write(int64_t slot, const Value& coerced) {
  std::byte item[8];
  encode(dtype(), coerced, item);
  do_write_range(slot, 1, item);
}

void Metal::do_read_range(int64_t first, int64_t count, std::byte* out) const {
  const auto offset = static_cast<int64_t>(itemsize_) * first;
  device::download(*queue_, buffer_, offset, static_cast<int64_t>(itemsize_) * count, out,
                   "Metal read")
      ->wait();
}

void Metal::do_write_range(int64_t first, int64_t count, const std::byte* in) {
  const auto offset = static_cast<int64_t>(itemsize_) * first;
  device::upload(*queue_, in, buffer_, offset, static_cast<int64_t>(itemsize_) * count,
                 "Metal write")
      ->wait();
}

void Metal::do_read_values(int64_t first, int64_t count, Value* out) const {
  std::vector<std::byte> items(static_cast<std::size_t>(count) * itemsize_);
  do_read_range(first, count, items.data());
  for (int64_t i = 0; i < count; ++i) out[i] = decode(dtype(), items.data() + i * itemsize_);
}

void Metal::do_write_values(int64_t first, int64_t count, const Value* coerced) {
  std::vector<std::byte> items(static_cast<std::size_t>(count) * itemsize_);
  for (int64_t i = 0; i < count; ++i) encode(dtype(), coerced[i], items.data() + i * itemsize_);
  do_write_range(first, count, items.data());
}

void Metal::do_allocate(int64_t n) { buffer_ = allocate_buffer(*queue_, dtype(), n); }

void Metal::do_release() {
  // Pending commands keep the buffer alive themselves; waiting here makes
  // release mean what it means for host storage: nothing touches the values
  // after it returns.
  if (buffer_ != nullptr) buffer_->wait_idle();
  buffer_.reset();
}

}  // namespace strideweave
