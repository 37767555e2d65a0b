// Binding of the move-operation classes and the legacy move registry.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "strideweave/move/move_operation.h"

namespace strideweave::bindings {

void bind_move(pybind11::module_& m);

// An instance of the move operation class `operation`: a C++ built-in, or the
// Python class registered with the descriptor called with no arguments (its
// exceptions as PythonException), behind released_with_gil so that its last
// release, on any thread, takes the GIL exit-safely. Takes the GIL itself
// (ExitSafeGil) for a Python class only; call it holding no core lock.
std::shared_ptr<MoveOperation> make_move_operation(const ClassDescriptor& operation);

}  // namespace strideweave::bindings
