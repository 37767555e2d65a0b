#include "strideweave/carrier/foreign_storage.h"

#include <cstring>
#include <string>
#include <utility>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {

DType with_itemsize(const std::string& class_name, DType dtype) {
  if (!dtype.itemsize()) {
    throw TypeError(class_name + ": dtype " + dtype.name() +
                    " has no item size; a Python storage carrier stores encoded items (Bool, "
                    "Int32, Float32 or a compound dtype)");
  }
  return dtype;
}

std::string range_text(int64_t first, int64_t count) {
  return "(first=" + std::to_string(first) + ", count=" + std::to_string(count) + ")";
}

// Whether some byte patterns of an item of `dtype` are no value (a Bool's).
bool has_invalid_encodings(const DType& dtype) {
  if (dtype.kind() == DTypeKind::kBool) return true;
  for (const Field& f : dtype.fields()) {
    if (f.dtype.kind() == DTypeKind::kBool) return true;
  }
  return false;
}

}  // namespace

ForeignStorageCarrier::ForeignStorageCarrier(const std::string& class_name, DType dtype,
                                             bool mutable_)
    : Carrier(with_itemsize(class_name, std::move(dtype)), mutable_,
              CarrierMutex::Kind::kForeignGate) {}

const ClassDescriptor& ForeignStorageCarrier::static_class() {
  static const ClassDescriptor& descriptor =
      builtin_carrier_class("PythonStorageCarrier", &Carrier::static_class());
  return descriptor;
}

int64_t ForeignStorageCarrier::checked_slot_count() {
  const int64_t count = storage_slot_count();
  if (count < 0) {
    throw ValueError(hook_name(Hook::kSlotCount) + " of " + label() + " returned " +
                     std::to_string(count) + ", a negative slot count");
  }
  return count;
}

void ForeignStorageCarrier::initialize(std::optional<int64_t> n,
                                       const std::optional<std::vector<Value>>& values) {
  const std::string name = carrier_class().name();
  const int64_t wanted = initial_slot_count(name.c_str(), n, values);
  const int64_t held = checked_slot_count();
  const bool sized = n.has_value() || values.has_value();
  if (held != 0 && sized && wanted != held) {
    throw ValueError(name + ": " +
                     (values ? "the " + std::to_string(wanted) + " values given"
                             : "n=" + std::to_string(wanted)) +
                     " disagree with its storage, which holds " + std::to_string(held) + " slots");
  }
  int64_t slots = held;
  if (held == 0 && wanted > 0) {
    do_allocate(wanted);
    slots = wanted;
  }
  if (values && !values->empty()) {
    std::vector<Value> coerced;
    coerced.reserve(values->size());
    for (const Value& v : *values) coerced.push_back(coerce(dtype(), v));
    do_write_values(0, static_cast<int64_t>(coerced.size()), coerced.data());
  }
  initialize_slots(slots);
}

void ForeignStorageCarrier::read_checked(int64_t first, int64_t count, std::byte* out) const {
  if (!has_invalid_encodings(dtype())) {
    storage_read(first, count, out);  // every byte pattern is a value: nothing to check
    return;
  }
  std::vector<std::byte> read(static_cast<std::size_t>(count) * itemsize());
  storage_read(first, count, read.data());
  try {
    validate_encoding(dtype(), read.data(), count);
  } catch (const ValueError& e) {
    throw ValueError(hook_name(Hook::kReadRange) + range_text(first, count) + " of " + label() +
                     " returned a value that is not " + dtype().name() + ": " + e.what());
  }
  std::memcpy(out, read.data(), read.size());
}

Value ForeignStorageCarrier::do_read(int64_t slot) const {
  std::vector<std::byte> item(itemsize());
  read_checked(slot, 1, item.data());
  return decode(dtype(), item.data());
}

void ForeignStorageCarrier::do_write(int64_t slot, const Value& coerced) {
  std::vector<std::byte> item(itemsize());
  encode(dtype(), coerced, item.data());
  storage_write(slot, 1, item.data());
}

void ForeignStorageCarrier::do_allocate(int64_t n) {
  storage_allocate(n);
  const int64_t made = checked_slot_count();
  if (made != n) {
    throw RuntimeError(hook_name(Hook::kAllocate) + "(" + std::to_string(n) + ") of " + label() +
                       " left " + hook_name(Hook::kSlotCount) + " at " + std::to_string(made) +
                       ", not " + std::to_string(n));
  }
}

void ForeignStorageCarrier::do_release() { storage_release(); }

void ForeignStorageCarrier::do_read_range(int64_t first, int64_t count, std::byte* out) const {
  read_checked(first, count, out);
}

void ForeignStorageCarrier::do_write_range(int64_t first, int64_t count, const std::byte* in) {
  storage_write(first, count, in);
}

void ForeignStorageCarrier::do_start_write_range(int64_t first, int64_t count, const std::byte* in,
                                                 WriteDone done) {
  storage_start_write(first, count, in, std::move(done));
}

void ForeignStorageCarrier::storage_start_write(int64_t first, int64_t count, const std::byte* in,
                                                WriteDone done) {
  storage_write(first, count, in);
  done(nullptr);
}

void ForeignStorageCarrier::do_read_values(int64_t first, int64_t count, Value* out) const {
  std::vector<std::byte> items(static_cast<std::size_t>(count) * itemsize());
  read_checked(first, count, items.data());
  for (int64_t i = 0; i < count; ++i) {
    out[i] = decode(dtype(), items.data() + static_cast<std::size_t>(i) * itemsize());
  }
}

void ForeignStorageCarrier::do_write_values(int64_t first, int64_t count, const Value* coerced) {
  std::vector<std::byte> items(static_cast<std::size_t>(count) * itemsize());
  for (int64_t i = 0; i < count; ++i) {
    encode(dtype(), coerced[i], items.data() + static_cast<std::size_t>(i) * itemsize());
  }
  storage_write(first, count, items.data());
}

}  // namespace strideweave
