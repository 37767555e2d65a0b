// Binding of Tensor, its views and the factories.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

void bind_tensor(pybind11::module_& m);

}  // namespace strideweave::bindings
