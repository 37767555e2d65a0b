// Binding of the movement request path (spec/interop-movement): move_async,
// move, AwaitResult and AwaitMove, and the move's autograd node.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <exception>

#include "gil.h"
#include "python_exception.h"

namespace strideweave::bindings {

// How long a wait blocks without the GIL before it looks for a pending signal.
inline constexpr std::chrono::milliseconds kSignalPollInterval{20};

// AwaitResult: the read-only completion handle of one framework-created
// request (AwaitMove here; AwaitProjection and AwaitResidency in
// tiled_evictable.cc subclass it). wait() blocks with the GIL released, then
// returns the identical result object, or raises the identical exception
// object, on every call (both cached here, under the GIL, on the first
// observation).
//
// wait() is interruptible: every kSignalPollInterval it takes the GIL and runs
// the pending signal handlers (PyErr_CheckSignals; they run on the main thread
// only). An exception a handler raises, KeyboardInterrupt for Ctrl-C,
// propagates from wait() at once. The request goes on and the handle stays
// valid: a later wait() returns the outcome.
class AwaitResult {
 public:
  virtual ~AwaitResult() = default;

  virtual bool done() const = 0;

  pybind11::object wait() {
    while (!done()) {
      if (without_gil([&] { return block_for(kSignalPollInterval); })) break;
      if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
    }
    if (!value_.is_none() || !exception_.is_none()) return observed();
    if (std::exception_ptr error = failure()) {
      exception_ = exception_object(error);
    } else {
      value_ = result();
    }
    return observed();
  }

 protected:
  // Blocks until the terminal outcome or `timeout`, whichever comes first;
  // true at the outcome. Called without the GIL; never throws the failure.
  virtual bool block_for(std::chrono::milliseconds timeout) const = 0;
  // The recorded failure, or nullptr after success.
  virtual std::exception_ptr failure() const = 0;
  // The result object after success; called with the GIL.
  virtual pybind11::object result() const = 0;

 private:
  pybind11::object observed() const {
    if (!exception_.is_none()) raise_object(exception_);
    return value_;
  }

  pybind11::object value_ = pybind11::none();
  pybind11::object exception_ = pybind11::none();
};

void bind_move_request(pybind11::module_& m);

// MoveNode, the autograd node of a differentiable move; after bind_autograd
// (its base class Node).
void bind_move_node(pybind11::module_& m);

}  // namespace strideweave::bindings
