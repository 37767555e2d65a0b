// Binding of PythonStorageCarrier (spec/carrier-storage, "Python storage
// carriers"): the base of carriers whose storage a Python subclass implements
// in spans, and the GIL functions the core's foreign-storage gate waits with.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

void bind_python_storage(pybind11::module_& m);

}  // namespace strideweave::bindings
