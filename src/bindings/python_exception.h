// PythonException: a Python exception object travelling through core code
// (a MoveOperation._copy that raised on a worker thread, recorded as a move's
// terminal failure), so that the caller observes the identical object.
#pragma once

#include <pybind11/pybind11.h>

#include <exception>
#include <memory>
#include <string>

namespace strideweave::bindings {

class PythonException : public std::exception {
 public:
  // Takes the exception object of `error`. Requires the GIL.
  explicit PythonException(pybind11::error_already_set& error);

  // The exception object. Requires the GIL.
  pybind11::object object() const;

  // "TypeError: message", captured at construction.
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  // Released through ExitSafeGil (leaked once the interpreter is exiting):
  // the last copy of the exception may be destroyed on any thread.
  std::shared_ptr<PyObject> object_;
  std::string what_;
};

// The Python exception object for the exception `error` (a PythonException's
// own object, or a new exception through the one translation table).
// Requires the GIL.
pybind11::object exception_object(std::exception_ptr error);

// Raises `exception` (an exception object) as the current Python error:
// throws error_already_set. Requires the GIL.
[[noreturn]] void raise_object(const pybind11::object& exception);

}  // namespace strideweave::bindings
