// Completion: the shared terminal state behind every await handle
// (spec/interop-movement, "Await results share one completion contract").
//
// A Completion records one terminal outcome, a value or an exception, exactly
// once: the first of succeed() / fail() wins and every later call is refused
// (returns false), so whichever thread finishes a request last can attempt
// the commit without coordinating with the others. done() turns true exactly
// when the outcome is recorded. wait() blocks until then and returns the same
// value object, or rethrows the same exception object, on every call from
// every thread. wait_for() bounds one wait, for callers that must look at
// something else meanwhile (the binding checks for signals between waits).
//
// Callbacks registered with on_done() run exactly once each, outside the
// Completion's lock: on the recording thread, after the outcome is visible to
// done() and wait(), in registration order; or at once on the registering
// thread when the outcome is already recorded. A callback must not throw
// (one that does terminates the process: completion has no one to report to).
//
// Thread safety: every member may be called from any thread. wait() blocks
// the calling thread only; it holds no lock while blocked other than the
// Completion's own mutex through its condition variable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace strideweave {

template <class T>
class Completion {
 public:
  Completion() = default;
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;

  // Records success with `value` unless an outcome is recorded; true when
  // this call recorded it.
  bool succeed(T value) {
    return record([&] { value_.emplace(std::move(value)); });
  }

  // Records failure with `error` (non-null) unless an outcome is recorded;
  // true when this call recorded it.
  bool fail(std::exception_ptr error) {
    return record([&] { error_ = std::move(error); });
  }

  bool done() const {
    std::lock_guard lock(mu_);
    return done_;
  }

  // Blocks until the outcome is recorded, then returns the value or rethrows
  // the recorded exception object.
  const T& wait() const {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [&] { return done_; });
    if (error_) std::rethrow_exception(error_);
    return *value_;
  }

  // Blocks until the outcome is recorded or `timeout` has passed; true when
  // it is recorded. Never rethrows: the outcome is read with wait() or error().
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, timeout, [&] { return done_; });
  }

  // The recorded exception, or nullptr while pending or after success.
  std::exception_ptr error() const {
    std::lock_guard lock(mu_);
    return error_;
  }

  // For fork() (move/request.cc): the prepare handler holds the completion's
  // lock across the fork, so that the child, whose only thread is the one
  // that forked, finds it free; the parent and the child release it.
  void lock_for_fork() const { mu_.lock(); }
  void unlock_after_fork() const { mu_.unlock(); }

  // Runs `callback` once the outcome is recorded (see the file comment).
  // Const: an observer that holds the completion read-only (a request's
  // completion()) may register one; it changes no outcome.
  void on_done(std::function<void()> callback) const {
    {
      std::lock_guard lock(mu_);
      if (!done_) {
        callbacks_.push_back(std::move(callback));
        return;
      }
    }
    run(callback);
  }

 private:
  template <class Store>
  bool record(Store&& store) {
    std::vector<std::function<void()>> callbacks;
    {
      std::lock_guard lock(mu_);
      if (done_) return false;
      store();
      done_ = true;
      callbacks.swap(callbacks_);
    }
    changed_.notify_all();
    for (std::function<void()>& callback : callbacks) run(callback);
    return true;
  }

  // noexcept: a throwing callback terminates instead of unwinding into the
  // thread that recorded the outcome.
  static void run(std::function<void()>& callback) noexcept { callback(); }

  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  bool done_ = false;
  std::optional<T> value_;
  std::exception_ptr error_;
  mutable std::vector<std::function<void()>> callbacks_;
};

}  // namespace strideweave
