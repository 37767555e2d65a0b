// ForeignStorageCarrier: a carrier whose storage is implemented outside the
// core (spec/carrier-storage, "Python storage carriers"): in the binding, by a
// Python subclass of PythonStorageCarrier.
//
// A subclass implements storage in spans, with five hooks: the slot count,
// read a range into a buffer, write a range from a buffer, allocate and
// release. The write may complete asynchronously (storage_start_write): a
// move whose last step is that write reports its outcome when the storage
// does, and no thread waits for it. Everything else is the Carrier base's, kept around the hooks
// exactly as for a built-in: versions, tokens, pins, the owner path, value
// conversion and encoding checks, the release state and locking. A range
// entry point, and a bulk move or read of n slots, makes O(1) hook calls.
//
// The mutex is a gate (carrier_mutex.h): the hooks run foreign code that may
// wait for the GIL, so they never run while the thread holds a core lock.
// What the hooks return is checked before anything uses it: a slot count that
// is negative, or that an allocation of n slots did not make n, and a read
// that leaves a Bool byte other than 0 or 1 fail naming the hook, and nothing
// changes (no version, no slot count, no byte of a reader's buffer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strideweave/carrier/carrier.h"

namespace strideweave {

class ForeignStorageCarrier : public Carrier {
 public:
  // The descriptor of the root of foreign-storage classes, named as the
  // binding's class is: PythonStorageCarrier (abstract, definition-free).
  static const ClassDescriptor& static_class();

  // The hooks, for messages (hook_name).
  enum class Hook { kSlotCount, kReadRange, kWriteRange, kAllocate, kRelease };

  // Completes the construction once the subclass's storage is ready (for a
  // Python subclass: after its __init__ set the storage up), before the
  // carrier is shared: reads the storage's slot count; when the storage is
  // empty, allocates n slots (len(values) when values are given); then writes
  // the values. No version changes. Throws ValueError for n < 0, for n that
  // disagrees with values, and for n or values that disagree with a storage
  // already holding slots; the hooks' errors as the entry points throw them.
  void initialize(std::optional<int64_t> n, const std::optional<std::vector<Value>>& values);

 protected:
  // Throws TypeError naming `class_name` and the dtype when it has no item
  // size (Any, Floating): the hooks move encoded bytes.
  ForeignStorageCarrier(const std::string& class_name, DType dtype, bool mutable_);

  // The storage hooks. Each is called with the gate held (after
  // initialize) and no core lock, for a range within the slots, count > 0.
  // `out` and `in` hold count * itemsize bytes in native encoding;
  // storage_read writes `out` only when it succeeds.
  virtual int64_t storage_slot_count() = 0;
  virtual void storage_read(int64_t first, int64_t count, std::byte* out) const = 0;
  virtual void storage_write(int64_t first, int64_t count, const std::byte* in) = 0;
  // storage_write for a caller with nothing left to do after it (a move's
  // last step, Carrier::do_start_write_range): it may finish later and report
  // through `done`, once, from any thread; `in` is read before it returns.
  // The default calls storage_write, then done.
  virtual void storage_start_write(int64_t first, int64_t count, const std::byte* in,
                                   WriteDone done);
  virtual void storage_allocate(int64_t n) = 0;
  virtual void storage_release() = 0;

  // How messages name `hook` ("MyCarrier._read_range").
  virtual std::string hook_name(Hook hook) const = 0;

  Value do_read(int64_t slot) const final;
  void do_write(int64_t slot, const Value& coerced) final;
  void do_allocate(int64_t n) final;
  void do_release() final;
  void do_read_range(int64_t first, int64_t count, std::byte* out) const final;
  void do_write_range(int64_t first, int64_t count, const std::byte* in) final;
  void do_start_write_range(int64_t first, int64_t count, const std::byte* in,
                            WriteDone done) final;
  void do_read_values(int64_t first, int64_t count, Value* out) const final;
  void do_write_values(int64_t first, int64_t count, const Value* coerced) final;

 private:
  // storage_read into `out`, checked. For a dtype with Bool items, through a
  // buffer of its own checked before `out` is written; otherwise straight into
  // `out`, which storage_read writes only once the hook succeeded.
  void read_checked(int64_t first, int64_t count, std::byte* out) const;
  // storage_slot_count(), checked: ValueError naming the hook when negative.
  int64_t checked_slot_count();
  std::size_t itemsize() const { return *dtype().itemsize(); }
};

}  // namespace strideweave
