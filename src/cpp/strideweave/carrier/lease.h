// Lease: the private write path of the operation pinning a carrier
// (spec/carrier-storage, "An operation in progress can pin a carrier"), and
// its Admission of a thread.
//
// Carrier::pin creates the lease; the carrier keeps the pin's state (which
// operation holds it, whether it refuses reads, whether it wrote) and the
// lease is the one handle through which that operation writes, installs,
// syncs, releases and ends it (a move pins its source and its destination:
// move/request.h).
//
// Carrier::PinAccess, the choice between a pin that lets others read and one
// that refuses them, stays with Carrier: it is part of Carrier::pin's
// signature and of the carrier's own checks.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "strideweave/carrier/carrier.h"
#include "strideweave/carrier/slot_access.h"
#include "strideweave/dtype/value.h"

namespace strideweave {

// The private write path of the operation pinning a carrier. Move-only. The
// pin ends exactly once: at end(), at release() or when the last lease object
// holding it is destroyed, whichever comes first; a moved-from or ended lease
// holds none. Writes through a lease refuse only a released carrier and a
// carrier constructed immutable (not its pin, not its ownership).
//
// Versions: the writes of one pin count as one mutation. Writes through the
// lease (and public writes it admits) do not increment the version one by
// one; when the pin ends, the version increments by exactly one if any of
// them succeeded, and not at all otherwise. A pin that commit_move() ends
// changes no version: a successful move is no in-place mutation.
//
// Admission: for the duration of an Admission, the public entry points called
// on the admitting thread write the pinned carrier as the lease does, so an
// operation's hook written against the public entry points (a Python
// MoveOperation._copy, which receives the carrier itself) can fill it; on
// every other thread, and after the admission, they stay refused.
class Lease {
 public:
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease();

  // The pinned carrier. Throws RuntimeError naming the operation once the
  // lease has ended.
  Carrier& carrier() const;
  const std::string& operation() const noexcept { return operation_; }
  bool active() const noexcept { return carrier_ != nullptr; }

  // The entry points of Carrier, through the lease, with their errors; they
  // throw RuntimeError naming the operation once the lease has ended.
  void write(int64_t slot, const Value& value);
  void write_range(int64_t first, std::span<const std::byte> in);
  void write_range_values(int64_t first, std::span<const Value> values);
  void allocate(int64_t n);
  // allocate(), for a caller that writes every one of the n slots through
  // this lease before the pin ends (a lowered transfer into a fresh part): the
  // carrier may leave them unzeroed (Carrier::do_allocate_for_overwrite), so
  // they are unspecified until written. A pin that ends with nothing written
  // after the allocation (a move failing before its transfer wrote) leaves
  // them zeroed, as allocate() does.
  void allocate_for_overwrite(int64_t n);

  // Ends the pin; later calls do nothing.
  void end() noexcept;

  // Calls fn(const SlotWriter&) with the pinned carrier's mutex held, after
  // the checks of a write through the lease (RuntimeError for a released
  // carrier, one constructed immutable, or an ended lease): one hold of the
  // lock for a copy into the storage, in place when it is host memory. The
  // call counts as one write through the lease, also when fn throws (the
  // slots fn may have written are then unspecified). `fn` must not call back
  // into this carrier or run Python; it may be called with another carrier's
  // mutex held only when both carriers are pinned by the same operation,
  // which takes them in one order (a move: source, then destination).
  template <class F>
  void write_locked(F&& fn);

  // For a transfer that staged the carrier's new value in fresh storage: after
  // the checks of a write through the lease, calls fn() with the pinned
  // carrier's mutex held, which puts the storage in place (the carrier's own
  // install entry point: CPU::install, Metal::install), after which the
  // carrier holds `slots` slots. Counts as one write through the lease. fn
  // must not throw, call back into this carrier or run Python.
  template <class F>
  void install_locked(int64_t slots, F&& fn);

  // Releases the pinned carrier and ends the pin in one step, so no other
  // caller can act between them (a move releasing its source at its terminal
  // commit). The version follows the pin rule above; release itself changes
  // nothing else. Throws RuntimeError naming the operation once the lease has
  // ended.
  void release();

  // Counts the pin as having written, so that its end increments the version
  // also when the writes happen outside the lease's entry points (a device
  // command filling the carrier's buffer). Throws RuntimeError naming the
  // operation once the lease has ended.
  void mark_written();

  // Ends the pin as the terminal commit of a successful move into the pinned
  // carrier (spec/carrier-storage, "A successful move changes neither
  // carrier's version"), in one hold of its mutex: the version stays what it
  // was when the pin began, whatever was written through the lease (an
  // allocation included), and Carrier::moves_received() increases by exactly
  // one. Throws RuntimeError naming the operation once the lease has ended.
  void commit_move();

  // Makes the pinned carrier's slots durable (Carrier::do_sync, under its
  // mutex): a move calls it before its terminal commit. Throws RuntimeError
  // naming the operation once the lease has ended or the carrier is
  // released, and the storage's OSError.
  void sync();

  // Marks the calling thread as acting for this lease until destroyed (see
  // the class comment). Admissions nest; each must be destroyed on the thread
  // that created it.
  class Admission {
   public:
    ~Admission();
    Admission(const Admission&) = delete;
    Admission& operator=(const Admission&) = delete;

   private:
    friend class Lease;
    friend class Carrier;
    Admission(const Carrier* carrier, uint64_t pin_id);

    // Whether the calling thread holds an admission of pin `pin_id` of
    // `carrier`: the carrier's checks ask it while they hold its mutex.
    static bool held(const Carrier* carrier, uint64_t pin_id) noexcept;
  };
  // Throws RuntimeError naming the operation once the lease has ended.
  [[nodiscard]] Admission admit() const;

 private:
  friend class Carrier;
  Lease(std::shared_ptr<Carrier> carrier, uint64_t pin_id, std::string operation);

  std::shared_ptr<Carrier> carrier_;
  uint64_t pin_id_ = 0;
  std::string operation_;
};

template <class F>
void Lease::write_locked(F&& fn) {
  Carrier& pinned = carrier();
  const Carrier::WritePath path{Carrier::WritePath::Kind::kLease, pin_id_, nullptr};
  std::shared_ptr<Carrier> owner;  // dropped after the lock: it may be the last reference
  std::lock_guard lock(pinned.mu_);
  pinned.require_writable_locked("write", path, owner);
  pinned.count_write_locked(path);
  fn(SlotWriter(pinned));
}

template <class F>
void Lease::install_locked(int64_t slots, F&& fn) {
  write_locked([&](const SlotWriter& writer) {
    fn();
    writer.carrier_.slots_ = slots;
  });
}

}  // namespace strideweave
