// Binding of the move-operation classes and the legacy move registry.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "strideweave/move/move_operation.h"

namespace strideweave::bindings {

void bind_move(pybind11::module_& m);

}  // namespace strideweave::bindings
