// CoreMutex: the mutex of every core lock (carrier state, and the registries
// of the movement issue), counted per thread so that code which must never
// run under a core lock can check it (docs/threading.md).
#pragma once

#include <cstdint>
#include <mutex>

namespace strideweave {

// A std::mutex that keeps, per thread, the number of CoreMutex locks the
// thread holds. Lockable: use it with std::lock_guard, std::unique_lock and
// std::scoped_lock exactly as a std::mutex. The count costs one thread-local
// increment per lock and one decrement per unlock.
class CoreMutex {
 public:
  CoreMutex() = default;
  CoreMutex(const CoreMutex&) = delete;
  CoreMutex& operator=(const CoreMutex&) = delete;

  void lock();
  bool try_lock();
  void unlock();

 private:
  std::mutex mu_;
};

// The number of CoreMutex locks the calling thread holds now. Anything that
// runs Python (or may wait for a lock held by a thread running Python) must
// see zero: the binding's one GIL-acquiring helper refuses otherwise.
int core_locks_held() noexcept;

// fork() and core locks (docs/threading.md, "fork()"). A child process has
// only the thread that called fork(), so a lock another thread held at that
// moment would stay locked in the child forever. The fork gate prevents it:
// fork()'s prepare handler (pthread_atfork, registered when the library is
// loaded) closes the gate, so that a thread holding no core lock waits before
// it takes one (try_lock fails instead), then waits until no other thread
// holds a core lock. Holders finish: nothing waits for the GIL, for Python or
// for a thread outside the gate while it holds a core lock, so the wait is
// bounded by the longest critical section (a copy, a file write). The gate
// reopens in the parent and, fresh, in the child, whose core locks are then
// all free. Each thread marks itself a holder on a record of its own, so the
// gate adds one atomic exchange to a thread's outermost lock and shares no
// cache line between threads.
//
// The number of threads holding at least one core lock now (tests).
int threads_holding_core_locks() noexcept;

// How many fork()s lie between the first process and this one: 0 there, one
// more in each child. A lock that records the generation of its holder knows,
// in a child, that the holder was a thread the child does not have.
uint64_t fork_generation() noexcept;

}  // namespace strideweave
