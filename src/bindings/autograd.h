// Binding of spec/autograd: grad mode, nodes, and Tensor's autograd members.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

// Binds after bind_tensor (it adds members to Tensor).
void bind_autograd(pybind11::module_& m);

}  // namespace strideweave::bindings
