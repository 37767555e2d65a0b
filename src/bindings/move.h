// Binding of the move-operation classes and the legacy move registry.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "strideweave/move/move_operation.h"

namespace strideweave::bindings {

void bind_move(pybind11::module_& m);

// An instance of the move operation class `operation`: a C++ built-in, or the
// Python class registered with the descriptor called with no arguments (its
// exceptions as PythonException). Takes the GIL itself (ExitSafeGil); call it
// holding no core lock.
std::shared_ptr<MoveOperation> make_move_operation(const ClassDescriptor& operation);

}  // namespace strideweave::bindings
