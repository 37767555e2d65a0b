// Metal: slots in a device buffer of the Metal device queue (device/queue.h;
// the emulated backend on machines without an Apple GPU). spec/interop-
// movement's Metal requirements; spec/carrier-storage "Metal stores slots in
// device memory".
//
// Dtypes: Float32, Int32 and Bool (TypeError naming Metal otherwise, as a GPU
// without float64 refuses it). The storage is not host memory: every read
// downloads through the queue and every write uploads through it, each
// waiting for its own command buffer, so host values are always observed
// after every earlier command on the device (reads synchronize first).
// Release waits for the work pending on the buffer, then frees it. Metal does
// not opt into DLPack (the base class's BufferError).
//
// Work on Metal tensors (operations, moves) is submitted to the queue without
// waiting: buffer() hands the device buffer to code that encodes commands.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/device/queue.h"

namespace strideweave {

class Metal : public Carrier {
 public:
  // n zero slots (empty when nullopt), or one slot per element of `values`.
  // Throws TypeError naming Metal and the dtype for a dtype it does not
  // support, ValueError for a slot count whose bytes overflow, MemoryError
  // when the device cannot allocate the buffer, plus the errors of
  // initial_slot_count and of the values' conversion.
  Metal(DType dtype, std::optional<int64_t> n = std::nullopt,
        std::optional<std::vector<Value>> values = std::nullopt, bool mutable_ = true);

  // Float32, Int32, Bool.
  static bool supports(const DType& dtype) noexcept;
  // Throws TypeError naming `who` and the dtype unless supports(dtype).
  static void require_supported(const DType& dtype, const char* who);

  static const ClassDescriptor& static_class();
  const ClassDescriptor& carrier_class() const override { return static_class(); }
  std::shared_ptr<Carrier> new_like() const override;

  // The queue its buffer lives on.
  device::Queue& queue() const noexcept { return *queue_; }

  // The device buffer (never null while live; a buffer of 0 bytes when
  // empty). Throws RuntimeError naming `operation` when released. Commands
  // using it must name it in their command buffer; its contents change only
  // through commands. The buffer stays valid while the caller holds it, also
  // after a release (which only drops the carrier's reference).
  device::BufferRef buffer(const char* operation) const;

  // buffer(), after the checks a read makes, under one lock: RuntimeError
  // naming `operation` when released or being written by a pending move
  // (pinned for writing by an operation that has not admitted the caller).
  // For kernels that read the buffer on the device.
  device::BufferRef buffer_for_read(const char* operation) const;

  std::size_t itemsize() const noexcept { return itemsize_; }

  // A device buffer for n slots of `dtype` on the Metal queue whose bytes are
  // unspecified until a command writes them (not zeroed): what a move stages
  // its value in before installing it. The constructor's errors.
  static device::BufferRef allocate_storage(const DType& dtype, int64_t n);

  // Puts `buffer` (from allocate_storage, holding `slots` slots of this
  // carrier's dtype) in place of the carrier's buffer through `lease`, which
  // pins this carrier: one write through the lease (Lease::install_locked).
  // Commands already submitted with the old buffer keep it alive until they
  // complete. Throws the errors of a write through the lease, and ValueError
  // when the buffer is smaller than `slots` slots.
  void install(Lease& lease, device::BufferRef buffer, int64_t slots);

 protected:
  Value do_read(int64_t slot) const override;
  void do_write(int64_t slot, const Value& coerced) override;
  void do_allocate(int64_t n) override;
  void do_release() override;
  void do_read_range(int64_t first, int64_t count, std::byte* out) const override;
  void do_write_range(int64_t first, int64_t count, const std::byte* in) override;
  void do_read_values(int64_t first, int64_t count, Value* out) const override;
  void do_write_values(int64_t first, int64_t count, const Value* coerced) override;

 private:
  static device::BufferRef allocate_buffer(device::Queue& queue, const DType& dtype, int64_t n,
                                           bool zeroed = true);

  device::Queue* queue_;
  std::size_t itemsize_;
  device::BufferRef buffer_;  // guarded by mu_
};

}  // namespace strideweave
