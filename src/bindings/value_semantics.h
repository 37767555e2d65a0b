// Value equality and hashing for bound C++ value types (Layout, DType).
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

// Adds __eq__ and __ne__ (NotImplemented for other types, so Python falls
// back to identity) and a __hash__ consistent with them from T::hash().
template <typename T, typename... Options>
void def_value_semantics(pybind11::class_<T, Options...>& cls) {
  namespace py = pybind11;
  const auto compare = [](const T& a, py::handle b, bool equal) -> py::object {
    if (!py::isinstance<T>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    return py::bool_((a == b.cast<const T&>()) == equal);
  };
  cls.def("__eq__", [compare](const T& a, py::handle b) { return compare(a, b, true); })
      .def("__ne__", [compare](const T& a, py::handle b) { return compare(a, b, false); })
      .def("__hash__", [](const T& v) { return static_cast<py::ssize_t>(v.hash() >> 1); });
}

}  // namespace strideweave::bindings
