// Binding of the logical dtypes.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

void bind_dtype(pybind11::module_& m);

}  // namespace strideweave::bindings
