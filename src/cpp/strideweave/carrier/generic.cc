#include "strideweave/carrier/generic.h"

#include "strideweave/util/error.h"

namespace strideweave {

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

const CarrierClass& Generic::static_class() {
  static const CarrierClass descriptor("Generic", &Carrier::static_class());
  return descriptor;
}

Generic::Generic(DType dtype, std::optional<int64_t> n, std::optional<std::vector<Value>> values,
                 bool mutable_)
    : Carrier(std::move(dtype), mutable_) {
  const int64_t count = initial_slot_count("Generic", n, values);
  elements_.reserve(static_cast<std::size_t>(count));
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

void Generic::do_allocate(int64_t n) {
  elements_.assign(static_cast<std::size_t>(n), zero_of(dtype()));
}

void Generic::do_release() {
  elements_.clear();
  elements_.shrink_to_fit();
}

}  // namespace strideweave
