// strideweave._core._testing: private entry points for the threading tests
// (conformance/carrier_storage/test_threads.py). Not public API.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

void bind_testing(pybind11::module_& m);

}  // namespace strideweave::bindings
