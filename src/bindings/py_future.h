// concurrent.futures.Future as the binding's one way for Python code to finish
// work later: a provider's prepared transfer and a Python storage carrier's
// _write_range may return one, and the core hears its outcome through a
// callback (TransferDone, Carrier::WriteDone).
#pragma once

#include <pybind11/pybind11.h>

#include <exception>
#include <functional>
#include <string>

namespace strideweave::bindings {

// Whether `object` is a concurrent.futures.Future. Requires the GIL.
bool is_future(pybind11::handle object);

// Arranges for `done` to receive `future`'s outcome once it completes: nullptr
// for a result, or its exception as the same object (PythonException), with
// `note` added to it when not empty (a cancelled future's CancelledError
// included). `done` runs on a pool worker, never on the thread completing the
// future: that thread holds the GIL in its done callback and may be a daemon
// thread the exiting interpreter stops, so the core's continuation (a move's
// commit) must not run there. `what` names the future in the TypeError for an
// exception() that is not an exception, and in the RuntimeError `done`
// receives when the future is dropped without completing. Requires the GIL;
// the callback may run before this returns, when the future is already done.
void report_when_done(const pybind11::object& future, std::string what, std::string note,
                      std::function<void(std::exception_ptr)> done);

}  // namespace strideweave::bindings
