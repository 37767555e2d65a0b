// CPU: slots in one 64-byte-aligned host buffer, exported to DLPack as
// device (1, 0) (spec/carrier-storage, interop-movement).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "strideweave/carrier/carrier.h"

namespace strideweave {

class CPU : public Carrier {
 public:
  static constexpr std::size_t kAlignment = 64;
  // Buffers of at least kMappedBytes (util/mapped_memory.h) are mapped, huge
  // pages requested and faulted in zeroed by the kernel (map_zeroed_memory).

  // n zero slots (empty when nullopt), or one slot per element of `values`.
  // Throws TypeError naming CPU and the dtype for an abstract dtype, ValueError
  // when n slots need more bytes than a buffer can hold, MemoryError when the
  // buffer cannot be allocated, plus the errors of Generic's constructor.
  CPU(DType dtype, std::optional<int64_t> n = std::nullopt,
      std::optional<std::vector<Value>> values = std::nullopt, bool mutable_ = true);

  // n slots whose contents are unspecified until written, for a producer that
  // writes every slot before anything else sees the carrier (an operation's
  // result): the buffer is not zeroed first. Otherwise as CPU(dtype, n).
  static std::shared_ptr<CPU> uninitialized(DType dtype, int64_t n);

  static const ClassDescriptor& static_class();
  const ClassDescriptor& carrier_class() const override { return static_class(); }
  std::shared_ptr<Carrier> new_like() const override;

  // {data(), kDLCPU, 0}; pointer 0 once released.
  DLPackInfo dlpack_info() const override;

  // The buffer's address. Throws RuntimeError when released. Writes through
  // it bypass the entry points and are invisible to versions.
  std::byte* data() const;

  std::size_t itemsize() const noexcept { return itemsize_; }

 protected:
  Value do_read(int64_t slot) const override;
  void do_write(int64_t slot, const Value& coerced) override;
  void do_allocate(int64_t n) override;
  void do_release() override;
  void do_read_range(int64_t first, int64_t count, std::byte* out) const override;
  void do_write_range(int64_t first, int64_t count, const std::byte* in) override;
  void do_read_values(int64_t first, int64_t count, Value* out) const override;
  void do_write_values(int64_t first, int64_t count, const Value* coerced) override;
  std::byte* do_host_data() const override { return buffer_.get(); }

 private:
  // Frees a buffer: munmap of `mapped` bytes for a mapped one, else std::free
  // (mapped 0; a value-initialized Free).
  struct Free {
    std::size_t mapped;
    void operator()(std::byte* p) const noexcept;
  };
  struct Uninitialized {};
  CPU(Uninitialized, DType dtype, int64_t n);

  // A buffer for n slots, zeroed unless `zeroed` is false; never null, even
  // for n == 0.
  std::unique_ptr<std::byte, Free> allocate_buffer(int64_t n, bool zeroed = true) const;

  std::size_t itemsize_;
  std::unique_ptr<std::byte, Free> buffer_;
  // buffer_.get(), published for lock-free reads by dlpack_info(); written
  // under the carrier's mutex whenever buffer_ changes.
  std::atomic<std::byte*> published_{nullptr};
};

}  // namespace strideweave
