// FileCarrier: the base of the carriers whose slots are a file's bytes, slot i
// in native encoding at byte itemsize * i (FileBacked, BlockDeviceCarrier).
//
// It owns the file, its descriptor, its path and whether the carrier created
// it as a temporary file, and implements Carrier's storage hooks once, over
// three hooks of its own that each subclass implements by its own discipline:
// read_bytes and write_bytes move a byte range of the file (FileBacked any
// range, BlockDeviceCarrier whole aligned blocks), resize sizes the file for
// n slots. The file is closed, and a temporary one removed, at release and at
// destruction.
//
// FileCarrier is not a carrier class of its own: it has no ClassDescriptor,
// and each subclass's descriptor names Carrier's as its base.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "strideweave/carrier/carrier.h"

namespace strideweave {

class FileCarrier : public Carrier {
 public:
  ~FileCarrier() override;

 protected:
  // Throws TypeError naming `carrier` (the subclass's name) and the dtype
  // when the dtype is abstract: a file holds items of an item size.
  FileCarrier(const char* carrier, DType dtype, bool mutable_);

  Value do_read(int64_t slot) const override;
  void do_write(int64_t slot, const Value& coerced) override;
  void do_allocate(int64_t n) override;
  void do_release() override;
  void do_read_range(int64_t first, int64_t count, std::byte* out) const override;
  void do_write_range(int64_t first, int64_t count, const std::byte* in) override;
  void do_read_values(int64_t first, int64_t count, Value* out) const override;
  void do_write_values(int64_t first, int64_t count, const Value* coerced) override;

  // Bytes [start, start + size) of the file into `out` / from `in` (slot
  // first's bytes start at first * itemsize_). Errors are the subclass's own
  // (its file comment).
  virtual void read_bytes(int64_t start, std::byte* out, std::size_t size) const = 0;
  virtual void write_bytes(int64_t start, const std::byte* in, std::size_t size) = 0;
  // Sizes the file for n slots (do_allocate).
  virtual void resize(int64_t n) const = 0;

  // Closes the file and removes a temporary one; idempotent.
  void close_file() noexcept;

  std::size_t itemsize_;
  std::filesystem::path path_;
  bool temporary_ = false;
  int fd_ = -1;
};

}  // namespace strideweave
