// CarrierMutex: the mutex of one carrier (Carrier::mu_, docs/threading.md).
//
// For a carrier whose storage is the core's (every built-in) it is a core
// lock, a CoreMutex. For a carrier whose storage hooks run foreign code (a
// ForeignStorageCarrier: a Python subclass of PythonStorageCarrier, whose hooks
// take the GIL) it is a gate instead: held like a mutex by the same code, but
// not a core lock, since its holder may wait for the GIL and run Python.
//
// What keeps the gate free of deadlocks:
//  - A thread waits for the gate without the GIL (ForeignWait), so the holder,
//    which may need the GIL to finish its hook, always gets it.
//  - The core never holds a core lock while a foreign hook runs: code that
//    would (a move's copy, a binary operation, a composite's parts) copies
//    through a buffer under one carrier's lock at a time or refuses foreign
//    storage, and the binding's call into Python refuses to run under a core
//    lock anyway.
//  - A thread holding the gate that calls back into the same carrier (a hook
//    using its own carrier) fails with RuntimeError instead of waiting for
//    itself; so does a thread of a fork() child finding the gate held by a
//    thread the child does not have.
#pragma once

#include <memory>

#include "strideweave/exec/core_mutex.h"

namespace strideweave {

class Carrier;

class CarrierMutex {
 public:
  enum class Kind {
    kCore,         // a core lock
    kForeignGate,  // a gate for storage hooks that run foreign code
  };

  // `carrier` names the carrier in the gate's errors; it must outlive this.
  CarrierMutex(const Carrier& carrier, Kind kind);
  ~CarrierMutex();
  CarrierMutex(const CarrierMutex&) = delete;
  CarrierMutex& operator=(const CarrierMutex&) = delete;

  // Lockable, as a std::mutex. A gate's lock() throws RuntimeError naming the
  // carrier when the calling thread holds it already, when its holder was lost
  // to a fork(), and when the calling thread would wait for it holding both a
  // core lock and the GIL (a deadlock: a bug of the caller).
  // A built-in carrier's lock is the CoreMutex, inline: the gate costs its
  // callers one predictable branch.
  void lock() {
    if (gate_ == nullptr) [[likely]] {
      core_.lock();
    } else {
      lock_gate();
    }
  }
  bool try_lock() { return gate_ == nullptr ? core_.try_lock() : try_lock_gate(); }
  void unlock() {
    if (gate_ == nullptr) [[likely]] {
      core_.unlock();
    } else {
      unlock_gate();
    }
  }

  bool is_foreign_gate() const noexcept { return gate_ != nullptr; }

  // The number of gates the calling thread holds now: above zero while it
  // runs a Python carrier's storage method.
  static int gates_held() noexcept;

 private:
  struct Gate;
  void lock_gate();
  bool try_lock_gate();
  void unlock_gate();
  // Throws when the gate, held, cannot be waited for. Caller holds core_.
  void check_waitable_locked() const;

  const Carrier& carrier_;
  CoreMutex core_;              // the lock itself, or the gate's state
  std::unique_ptr<Gate> gate_;  // kForeignGate only
};

}  // namespace strideweave
