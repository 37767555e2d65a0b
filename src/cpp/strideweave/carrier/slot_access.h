// Slot access inside a carrier's locked calls (spec/carrier-storage): the
// SlotReader that Carrier::read_locked hands its callback and the SlotWriter
// that Lease::write_locked hands its own. Both reach the storage hooks with the
// carrier's mutex already held, so a copy between carriers (a move, a binary
// math operation) reads or writes a whole window in one hold of each lock.
//
// They are the carrier's own view of its storage, not a path of their own:
// reads never change the version, and the writer writes only for the lease
// that counted the write before handing it out (Lease::write_locked).
//
// This header also holds the definition of the template Carrier::read_locked,
// which constructs a SlotReader: a file calling read_locked includes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "strideweave/carrier/carrier.h"
#include "strideweave/dtype/value.h"
#include "strideweave/layout/layout.h"

namespace strideweave {

// Slot access inside Carrier::read_locked. Valid only during that call.
class SlotReader {
 public:
  // The storage as host memory (slot i at byte itemsize * i), or nullptr.
  const std::byte* host() const { return carrier_.do_host_data(); }

  // The host memory of slots [first, first + count) (its first slot), or
  // nullptr when the storage is not host memory. Throws TypeError for a
  // dtype without an item size, IndexError for a range outside the slots.
  const std::byte* host_range(int64_t first, int64_t count) const;

  // Slots [first, first + count) in native encoding into `out`. Throws
  // IndexError for a range outside the slots, TypeError for a dtype without
  // an item size.
  void read_range(int64_t first, int64_t count, std::byte* out) const;

  // The values of slots [first, first + count) into `out`; every dtype.
  void read_values(int64_t first, int64_t count, Value* out) const;

  // The span walker's read: the item of slot offset + layout(i) into item
  // out_layout(i) of `out`, for every flat index i. Host storage is copied by
  // the strided kernel; other storage is read one range call per run (a
  // broadcast's stored slots once) and then arranged by the kernel, or read
  // straight into `out` when out_layout is the runs' image layout; foreign
  // storage (a call into Python per range) is read in one range call over the
  // window's span, holes included, then arranged. Throws
  // TypeError for a dtype without an item size, ValueError when the leaf
  // extents of the layouts differ. Pre: the window lies within the slots and
  // `out` holds out_layout's cosize items.
  void gather(const Layout& layout, int64_t offset, std::byte* out, const Layout& out_layout) const;

  // gather for element values (every dtype): the value of slot
  // offset + layout(i) into out[out_layout(i)], read one read_values call per
  // run, or for foreign storage one call over the window's span.
  void gather_values(const Layout& layout, int64_t offset, Value* out,
                     const Layout& out_layout) const;

 private:
  friend class Carrier;
  explicit SlotReader(const Carrier& carrier) : carrier_(carrier) {}
  const Carrier& carrier_;
};

// Slot access inside Lease::write_locked: the pinned carrier's storage, written
// in place with its mutex held. Valid only during that call. Writes bypass
// value conversion (the items must be in the dtype's native encoding, as a
// carrier of the same dtype stores them) but not the range rules.
class SlotWriter {
 public:
  // The host memory of slots [first, first + count) (its first slot), or
  // nullptr when the storage is not host memory. Throws TypeError for a
  // dtype without an item size, IndexError for a range outside the slots.
  std::byte* host_range(int64_t first, int64_t count) const;

  // Slots [first, first + count) in native encoding into `out`, as the pin's
  // holder sees them (a copy that must keep the slots it does not write).
  // Throws as SlotReader::read_range.
  void read_range(int64_t first, int64_t count, std::byte* out) const;

  // Stores the `count` natively encoded items at `in` in slots
  // [first, first + count) with one range write of the storage. Throws
  // TypeError for a dtype without an item size, IndexError for a range
  // outside the slots, ValueError naming the item for an encoded Bool that is
  // neither 0 nor 1 (nothing written then).
  void write_range(int64_t first, int64_t count, const std::byte* in) const;

  // write_range for a caller with nothing left to do after the write (a
  // move's last step, Carrier::do_start_write_range): storage that writes
  // asynchronously (a Python _write_range returning a Future) reports the
  // outcome through `done` later, from any thread, with no thread waiting for
  // it; any other storage writes before returning and reports through `done`.
  // `in` is read before the call returns. Throws as write_range for a range
  // or item the checks refuse, before anything is written or reported.
  void start_write_range(int64_t first, int64_t count, const std::byte* in,
                         Carrier::WriteDone done) const;

 private:
  friend class Lease;
  explicit SlotWriter(Carrier& carrier) : carrier_(carrier) {}
  // The checks of write_range: item size, range, encoding.
  void check_write_range(int64_t first, int64_t count, const std::byte* in) const;
  Carrier& carrier_;
};

template <class F>
void Carrier::read_locked(const char* operation, F&& fn) const {
  std::lock_guard lock(mu_);
  require_readable_locked(operation);
  fn(SlotReader(*this));
}

}  // namespace strideweave
