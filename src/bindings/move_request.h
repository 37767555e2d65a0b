// Binding of the movement request path (spec/interop-movement): move_async,
// move, AwaitResult and AwaitMove.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

void bind_move_request(pybind11::module_& m);

}  // namespace strideweave::bindings
