// strideweave._core._testing: private hooks the test suites use to reach
// states no public entry point can (a C++ worker thread, registry internals,
// a carrier lock, the process-wide pool at exit). Not part of the public API;
// no stability promise.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

void bind_testing(pybind11::module_& m);

}  // namespace strideweave::bindings
