// Binding of the math operations (spec/autograd, "Operations"): the module
// functions and Tensor's arithmetic operators and sum().
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

// Binds after bind_tensor (it adds methods to Tensor).
void bind_ops(pybind11::module_& m);

}  // namespace strideweave::bindings
