// Binding of the movement request path (spec/interop-movement): move_async,
// move, AwaitResult and AwaitMove, and the move's autograd node.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

void bind_move_request(pybind11::module_& m);

// MoveNode, the autograd node of a differentiable move; after bind_autograd
// (its base class Node).
void bind_move_node(pybind11::module_& m);

}  // namespace strideweave::bindings
