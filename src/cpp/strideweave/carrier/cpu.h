// CPU: slots in one 64-byte-aligned host buffer, exported to DLPack as
// device (1, 0) (spec/carrier-storage, interop-movement).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/util/host_buffer.h"

namespace strideweave {

class CPU : public Carrier {
 public:
  static constexpr std::size_t kAlignment = 64;
  // Buffers of at least kMappedBytes (util/mapped_memory.h) are mapped, huge
  // pages requested and faulted in zeroed by the kernel, or reused from the
  // cache of freed mappings (map_memory). A buffer is a HostBuffer: one that
  // a DLPack export still addresses when the carrier lets it go (release,
  // install, destruction) is retired, never reused (util/host_buffer.h).

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

  // Host storage for slots that belongs to no carrier yet: what a move stages
  // its value in before installing it (install()). Move-only; freed with the
  // object when never installed.
  class Storage {
   public:
    std::byte* data() const noexcept { return buffer_.get(); }
    int64_t slots() const noexcept { return slots_; }

   private:
    friend class CPU;
    HostBuffer buffer_;
    int64_t slots_ = 0;
    std::size_t itemsize_ = 0;
  };

  // Storage for n slots of `dtype` whose bytes are unspecified until written
  // (not zeroed), with the constructor's errors.
  static Storage allocate_storage(const DType& dtype, int64_t n);

  // Puts `storage` in place of the carrier's buffer through `lease`, which
  // pins this carrier: one write through the lease (Lease::install_locked),
  // after which the carrier holds storage.slots() slots with its bytes. The
  // old buffer is let go (HostBuffer::reset: freed, or retired while an
  // export holds it). Throws the errors of a write through the lease, and
  // TypeError when the storage's slots are not of this carrier's item size.
  void install(Lease& lease, Storage storage);

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
  // Leaves the buffer unzeroed (a mapping from the cache of freed ones keeps
  // what it held); returns true.
  bool do_allocate_for_overwrite(int64_t n) override;
  void do_release() override;
  void do_read_range(int64_t first, int64_t count, std::byte* out) const override;
  void do_write_range(int64_t first, int64_t count, const std::byte* in) override;
  void do_read_values(int64_t first, int64_t count, Value* out) const override;
  void do_write_values(int64_t first, int64_t count, const Value* coerced) override;
  std::byte* do_host_data() const override { return buffer_.get(); }
  std::shared_ptr<const void> do_hold_storage_locked() override;

 private:
  struct Uninitialized {};
  CPU(Uninitialized, DType dtype, int64_t n);

  // A buffer for n slots of `dtype`, zeroed unless `zeroed` is false; never
  // null, even for n == 0.
  static HostBuffer allocate_buffer(const DType& dtype, int64_t n, bool zeroed = true);

  std::size_t itemsize_;
  HostBuffer buffer_;
  // buffer_.get(), published for lock-free reads by dlpack_info(); written
  // under the carrier's mutex whenever buffer_ changes.
  std::atomic<std::byte*> published_{nullptr};
};

}  // namespace strideweave
