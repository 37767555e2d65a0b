#include "strideweave/carrier/cpu.h"

#include <algorithm>
#include <cstring>

#include "strideweave/carrier/lease.h"
#include "strideweave/exec/parallel.h"
#include "strideweave/util/checked_math.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::size_t cpu_itemsize(const DType& dtype) {
  const std::optional<std::size_t> size = dtype.itemsize();
  if (!size) {
    throw TypeError("CPU cannot hold the abstract dtype " + dtype.name() + ": it has no item size");
  }
  return *size;
}

}  // namespace

const ClassDescriptor& CPU::static_class() {
  static const ClassDescriptor& descriptor = builtin_carrier_class("CPU", &Carrier::static_class());
  return descriptor;
}

CPU::CPU(DType dtype, std::optional<int64_t> n, std::optional<std::vector<Value>> values,
         bool mutable_)
    : Carrier(std::move(dtype), mutable_), itemsize_(cpu_itemsize(this->dtype())) {
  const int64_t count = initial_slot_count("CPU", n, values);
  buffer_ = allocate_buffer(this->dtype(), count);
  published_ = buffer_.get();
  if (values) {
    for (std::size_t i = 0; i < values->size(); ++i) {
      encode(this->dtype(), coerce(this->dtype(), (*values)[i]), buffer_.get() + i * itemsize_);
    }
  }
  initialize_slots(count);
}

CPU::CPU(Uninitialized, DType dtype, int64_t n)
    : Carrier(std::move(dtype), true), itemsize_(cpu_itemsize(this->dtype())) {
  const int64_t count = initial_slot_count("CPU", n, std::nullopt);
  buffer_ = allocate_buffer(this->dtype(), count, false);
  published_ = buffer_.get();
  initialize_slots(count);
}

std::shared_ptr<CPU> CPU::uninitialized(DType dtype, int64_t n) {
  return std::shared_ptr<CPU>(new CPU(Uninitialized{}, std::move(dtype), n));
}

HostBuffer CPU::allocate_buffer(const DType& dtype, int64_t n, bool zeroed) {
  const std::size_t itemsize = cpu_itemsize(dtype);
  const auto too_big = [&] {
    return ValueError("CPU: " + std::to_string(n) + " slots of " + dtype.name() +
                      " need more bytes than a buffer can hold (at most 2**63 - 1)");
  };
  int64_t bytes = 0;
  int64_t rounded = 0;
  const auto alignment = static_cast<int64_t>(kAlignment);
  if (__builtin_mul_overflow(n, static_cast<int64_t>(itemsize), &bytes) ||
      __builtin_mul_overflow(std::max<int64_t>(1, ceil_div(bytes, alignment)), alignment,
                             &rounded)) {
    throw too_big();
  }
  const auto size = static_cast<std::size_t>(rounded);
  HostBuffer buffer = HostBuffer::allocate(size, kAlignment, zeroed);
  if (!buffer) {
    throw MemoryError("CPU: cannot allocate " + std::to_string(rounded) + " bytes for " +
                      std::to_string(n) + " slots of " + dtype.name());
  }
  return buffer;
}

CPU::Storage CPU::allocate_storage(const DType& dtype, int64_t n) {
  if (n < 0) throw ValueError("CPU: cannot allocate " + std::to_string(n) + " slots");
  Storage storage;
  storage.buffer_ = allocate_buffer(dtype, n, false);
  storage.slots_ = n;
  storage.itemsize_ = cpu_itemsize(dtype);
  return storage;
}

void CPU::install(Lease& lease, Storage storage) {
  if (&lease.carrier() != this) {
    throw RuntimeError("CPU: " + lease.operation() + " installs storage in " + label() +
                       " through a lease of another carrier");
  }
  if (storage.itemsize_ != itemsize_) {
    throw TypeError("CPU: storage of " + std::to_string(storage.itemsize_) +
                    "-byte items cannot hold the slots of " + label() + " (" + dtype().name() +
                    ")");
  }
  lease.install_locked(storage.slots_, [&] {
    buffer_.swap(storage.buffer_);
    published_ = buffer_.get();
  });
  // storage now holds the old buffer, let go here, after the lock.
}

std::shared_ptr<Carrier> CPU::new_like() const { return std::make_shared<CPU>(dtype()); }

DLPackInfo CPU::dlpack_info() const {
  return {reinterpret_cast<uint64_t>(published_.load()), kDLPackDeviceCPU, 0};
}

std::byte* CPU::data() const {
  std::lock_guard lock(mu_);
  require_live_locked("pointer");
  return buffer_.get();
}

Value CPU::do_read(int64_t slot) const {
  return decode(dtype(), buffer_.get() + static_cast<std::size_t>(slot) * itemsize_);
}

void CPU::do_write(int64_t slot, const Value& coerced) {
  encode(dtype(), coerced, buffer_.get() + static_cast<std::size_t>(slot) * itemsize_);
}

void CPU::do_read_range(int64_t first, int64_t count, std::byte* out) const {
  parallel_memcpy(out, buffer_.get() + static_cast<std::size_t>(first) * itemsize_,
                  static_cast<std::size_t>(count) * itemsize_);
}

void CPU::do_write_range(int64_t first, int64_t count, const std::byte* in) {
  parallel_memcpy(buffer_.get() + static_cast<std::size_t>(first) * itemsize_, in,
                  static_cast<std::size_t>(count) * itemsize_);
}

void CPU::do_read_values(int64_t first, int64_t count, Value* out) const {
  const std::byte* src = buffer_.get() + static_cast<std::size_t>(first) * itemsize_;
  for (int64_t i = 0; i < count; ++i) out[i] = decode(dtype(), src + i * itemsize_);
}

void CPU::do_write_values(int64_t first, int64_t count, const Value* coerced) {
  std::byte* dst = buffer_.get() + static_cast<std::size_t>(first) * itemsize_;
  for (int64_t i = 0; i < count; ++i) encode(dtype(), coerced[i], dst + i * itemsize_);
}

void CPU::do_allocate(int64_t n) {
  buffer_ = allocate_buffer(dtype(), n);
  published_ = buffer_.get();
}

bool CPU::do_allocate_for_overwrite(int64_t n) {
  buffer_ = allocate_buffer(dtype(), n, false);
  published_ = buffer_.get();
  return true;
}

void CPU::do_release() {
  published_ = nullptr;
  buffer_.reset();
}

std::shared_ptr<const void> CPU::do_hold_storage_locked() { return buffer_.hold_for_export(); }

}  // namespace strideweave
