// Binding of operation profiling: ProfileEvent, ProfilerSession, KeyAverage
// (strideweave.profiling builds profile() and Profile on them).
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

void bind_profiling(pybind11::module_& m);

}  // namespace strideweave::bindings
