// Binding of the composite carriers (spec/carrier-composition).
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

void bind_compose(pybind11::module_& m);

}  // namespace strideweave::bindings
