#include "strideweave/carrier/file_carrier.h"

#include <unistd.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strideweave/carrier/temporary_file.h"
#include "strideweave/util/error.h"

namespace strideweave {

namespace {

std::size_t file_itemsize(const char* carrier, const DType& dtype) {
  const std::optional<std::size_t> size = dtype.itemsize();
  if (!size) {
    throw TypeError(std::string(carrier) + " cannot hold the abstract dtype " + dtype.name() +
                    ": it has no item size");
  }
  return *size;
}

}  // namespace

FileCarrier::FileCarrier(const char* carrier, DType dtype, bool mutable_)
    : Carrier(std::move(dtype), mutable_), itemsize_(file_itemsize(carrier, this->dtype())) {}

FileCarrier::~FileCarrier() { close_file(); }

void FileCarrier::close_file() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  if (temporary_) remove_temporary_file(path_);
}

Value FileCarrier::do_read(int64_t slot) const {
  std::vector<std::byte> item(itemsize_);
  read_bytes(slot * static_cast<int64_t>(itemsize_), item.data(), itemsize_);
  return decode(dtype(), item.data());
}

void FileCarrier::do_write(int64_t slot, const Value& coerced) {
  std::vector<std::byte> item(itemsize_);
  encode(dtype(), coerced, item.data());
  write_bytes(slot * static_cast<int64_t>(itemsize_), item.data(), itemsize_);
}

void FileCarrier::do_read_range(int64_t first, int64_t count, std::byte* out) const {
  read_bytes(first * static_cast<int64_t>(itemsize_), out,
             static_cast<std::size_t>(count) * itemsize_);
}

void FileCarrier::do_write_range(int64_t first, int64_t count, const std::byte* in) {
  write_bytes(first * static_cast<int64_t>(itemsize_), in,
              static_cast<std::size_t>(count) * itemsize_);
}

void FileCarrier::do_read_values(int64_t first, int64_t count, Value* out) const {
  std::vector<std::byte> items(static_cast<std::size_t>(count) * itemsize_);
  do_read_range(first, count, items.data());
  for (int64_t i = 0; i < count; ++i) out[i] = decode(dtype(), items.data() + i * itemsize_);
}

void FileCarrier::do_write_values(int64_t first, int64_t count, const Value* coerced) {
  std::vector<std::byte> items(static_cast<std::size_t>(count) * itemsize_);
  for (int64_t i = 0; i < count; ++i) encode(dtype(), coerced[i], items.data() + i * itemsize_);
  do_write_range(first, count, items.data());
}

void FileCarrier::do_allocate(int64_t n) { resize(n); }

void FileCarrier::do_release() { close_file(); }

}  // namespace strideweave
