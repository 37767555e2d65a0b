// Binding of DLPack export: __dlpack__ and __dlpack_device__ on Tensor.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

// Adds the DLPack protocol methods to the already bound Tensor class.
void bind_dlpack(pybind11::module_& m);

}  // namespace strideweave::bindings
