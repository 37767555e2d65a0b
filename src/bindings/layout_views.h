// Binding of the layout views (spec/core-tensor-representation): Tensor.T,
// transpose, permute and reshape.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

// Binds after bind_tensor (it adds members to Tensor).
void bind_layout_views(pybind11::module_& m);

}  // namespace strideweave::bindings
