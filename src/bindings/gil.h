// The binding's one way to take the GIL from C++ code that may run on any
// thread: trampolines, DLPack deleters and the thread pool's workers
// (docs/threading.md).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>

#include "strideweave/exec/thread_pool.h"

namespace strideweave::bindings {

// Holds the GIL for one call into Python, or nothing once the interpreter is
// exiting.
//
// The constructor, in order:
//  1. throws RuntimeError naming `call` when the calling thread holds a core
//     lock (core_locks_held() > 0: a carrier or registry mutex): Python must
//     not run under one, and waiting for the GIL there can deadlock with a
//     thread that holds the GIL and waits for that lock;
//  2. acquires nothing when the interpreter is not initialized;
//  3. nests (acquires) when the calling thread already holds the GIL, exiting
//     or not;
//  4. otherwise acquires the GIL only while the module's exit hook has not
//     run and Python is not finalizing, checked under the exit hook's lock,
//     which is held until the GIL is taken: no thread ever waits for the GIL
//     in a finalizing interpreter (CPython would end it mid-frame).
// When nothing was acquired the caller must skip its Python call (false).
//
// Python is code the engine does not control: on a worker of a ThreadPool,
// the scope is a ThreadPool::BlockingRegion from its start (the wait for the
// GIL included) to its end, so a caller's hook that blocks, or waits on a move
// it starts, never leaves the pool without ready workers.
class ExitSafeGil {
 public:
  explicit ExitSafeGil(const char* call);
  ~ExitSafeGil();
  ExitSafeGil(const ExitSafeGil&) = delete;
  ExitSafeGil& operator=(const ExitSafeGil&) = delete;

  explicit operator bool() const noexcept { return acquired_; }

  // For calls that cannot be skipped: throws RuntimeError naming the call
  // when nothing was acquired.
  void require() const;

 private:
  ThreadPool::BlockingRegion blocking_;
  const char* call_;
  bool acquired_ = false;
  bool counted_ = false;  // a call from a thread that did not hold the GIL
  PyGILState_STATE state_{};
};

// Registers the exit hook with Python's atexit (once, at import). The hook
// releases the GIL, sets the exiting flag under the lock ExitSafeGil checks,
// then waits, for at most kExitGraceSeconds, for the calls into Python that
// worker threads have already entered to return, and then closes the door
// GilReleased checks. The thread pool itself is neither joined nor drained
// (strideweave/exec/thread_pool.h).
void register_exit_hook();

// Releases the GIL for its lifetime, as pybind11::gil_scoped_release does, and
// takes it back exit-safely: once the exit hook's grace period has ended, a
// thread other than the one that ran the hook (a worker still inside a
// caller's hook, a daemon thread) does not take the GIL again but waits,
// forever, for the process to end. CPython would otherwise end such a thread
// inside the wait for the GIL with pthread_exit, whose unwinding through the
// library's noexcept frames terminates the process. The thread that ran the
// hook (the one finalizing) takes the GIL back as usual. Usable as
// py::call_guard<GilReleased>.
class GilReleased {
 public:
  GilReleased() noexcept;
  ~GilReleased();
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;

 private:
  PyThreadState* saved_;
};

// The number of times the calling thread released the GIL through
// without_gil (for the tests of which calls keep it: _testing.gil_releases).
int64_t& gil_releases() noexcept;

// Runs f() with the GIL released and returns its result: for blocking core
// calls (copies, file I/O, waiting for a carrier's lock) whose Python
// arguments were converted before and whose result is converted after.
template <class F>
auto without_gil(F&& f) {
  ++gil_releases();
  const GilReleased unlocked;
  return f();
}

inline constexpr double kExitGraceSeconds = 1.0;

// `object`, behind a pointer whose last release (on any thread) takes the GIL
// through ExitSafeGil before dropping `object`, and leaks it once the
// interpreter is exiting. For objects that may keep Python objects alive (a
// carrier or move operation of a Python subclass, a Tensor over one) and are
// handed to work that may finish on a pool worker: pybind11 would otherwise
// take the GIL for the last release in a way that is not exit-safe.
template <class T>
std::shared_ptr<T> released_with_gil(std::shared_ptr<T> object, const char* what) {
  T* raw = object.get();
  return std::shared_ptr<T>(raw, [keep = std::move(object), what](T*) mutable {
    const ExitSafeGil gil(what);
    if (gil) {
      keep.reset();
    } else {
      new std::shared_ptr<T>(std::move(keep));  // deliberately leaked: the interpreter is exiting
    }
  });
}

}  // namespace strideweave::bindings
