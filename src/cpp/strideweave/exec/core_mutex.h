// CoreMutex: the mutex of every core lock (carrier state, and the registries
// of the movement issue), counted per thread so that code which must never
// run under a core lock can check it (docs/threading.md).
#pragma once

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

}  // namespace strideweave
