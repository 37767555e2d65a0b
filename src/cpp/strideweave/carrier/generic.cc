#include "strideweave/carrier/generic.h"

#include <algorithm>

#include "strideweave/util/allocation.h"
#include "strideweave/util/error.h"

namespace strideweave {

const ClassDescriptor& Generic::static_class() {
  static const ClassDescriptor& descriptor =
      builtin_carrier_class("Generic", &Carrier::static_class());
  return descriptor;
}

Generic::Generic(DType dtype, std::optional<int64_t> n, std::optional<std::vector<Value>> values,
                 bool mutable_)
    : Carrier(std::move(dtype), mutable_) {
  const int64_t count = initial_slot_count("Generic", n, values);
  allocating("Generic", count, "slots",
             [&] { elements_.reserve(static_cast<std::size_t>(count)); });
  if (values) {
    for (const Value& v : *values) elements_.push_back(coerce(this->dtype(), v));
  } else {
    elements_.assign(static_cast<std::size_t>(count), zero_of(this->dtype()));
  }
  initialize_slots(count);
}

std::shared_ptr<Carrier> Generic::new_like() const { return std::make_shared<Generic>(dtype()); }

Value Generic::do_read(int64_t slot) const { return elements_[static_cast<std::size_t>(slot)]; }

void Generic::do_write(int64_t slot, const Value& coerced) {
  elements_[static_cast<std::size_t>(slot)] = coerced;
}

void Generic::do_read_range(int64_t first, int64_t count, std::byte* out) const {
  const std::size_t itemsize = *dtype().itemsize();
  for (int64_t i = 0; i < count; ++i) {
    encode(dtype(), elements_[static_cast<std::size_t>(first + i)],
           out + static_cast<std::size_t>(i) * itemsize);
  }
}

void Generic::do_write_range(int64_t first, int64_t count, const std::byte* in) {
  const std::size_t itemsize = *dtype().itemsize();
  for (int64_t i = 0; i < count; ++i) {
    elements_[static_cast<std::size_t>(first + i)] =
        decode(dtype(), in + static_cast<std::size_t>(i) * itemsize);
  }
}

void Generic::do_read_values(int64_t first, int64_t count, Value* out) const {
  std::copy_n(elements_.begin() + first, count, out);
}

void Generic::do_write_values(int64_t first, int64_t count, const Value* coerced) {
  std::copy_n(coerced, count, elements_.begin() + first);
}

void Generic::do_allocate(int64_t n) {
  allocating("Generic", n, "slots",
             [&] { elements_.assign(static_cast<std::size_t>(n), zero_of(dtype())); });
}

void Generic::do_release() {
  elements_.clear();
  elements_.shrink_to_fit();
}

}  // namespace strideweave
