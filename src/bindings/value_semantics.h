// Value equality and hashing for bound C++ value types (Layout, DType).
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "type_hint.h"

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
  const std::string name = py::str(cls.attr("__name__"));
  const auto doc = [&name](const char* expression, const char* result) {
    return std::string("``") + expression + "``: " + result + " (" + name +
           "s compare by value).\n\nReturns NotImplemented when ``other`` is not a " + name +
           ", so that Python compares by identity.\n\nParameters\n----------\nother : " + name +
           "\n    The value compared with.\n\nReturns\n-------\nbool\n    " + result +
           ".\n\nRaises\n------\nTypeError\n    Never for a " + name +
           " operand; only when ``self`` is not a " + name + ".\n";
  };
  cls.def(
         "__eq__",
         [compare](const T& a, py::handle b)->Hint<"bool"> { return compare(a, b, true); },
         py::arg("other"), doc("self == other", "whether the two are equal").c_str())
      .def(
          "__ne__",
          [compare](const T& a, py::handle b)->Hint<"bool"> { return compare(a, b, false); },
          py::arg("other"), doc("self != other", "whether the two differ").c_str())
      .def("__hash__", [](const T& v) { return static_cast<py::ssize_t>(v.hash() >> 1); });
}

}  // namespace strideweave::bindings
