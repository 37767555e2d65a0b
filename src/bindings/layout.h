// Binding of core-layout.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

void bind_layout(pybind11::module_& m);

}  // namespace strideweave::bindings
