// The annotation every method bound without py::arg takes.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

// pybind11 loads `self` of a method bound from a member function pointer as a
// nullable pointer unless the binding describes its arguments, so
// `Layout.is_injective(None)` would call through a null pointer. With this
// annotation pybind11 records `self` as positional-only and not None, and such
// a call fails with TypeError like any other argument of the wrong type.
inline const pybind11::pos_only self_not_none{};

}  // namespace strideweave::bindings
