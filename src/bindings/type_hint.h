// Signature names for the arguments and results the binding checks itself.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/typing.h>

namespace strideweave::bindings {

// An argument or result that the binding checks or converts itself, so that
// pybind11 takes any object for it, named in the signature pybind11 writes
// into the docstring by what the caller passes: a parameter declared
// `Hint<"Tensor">` reads `tensor: Tensor` there, where pybind11::handle would
// read `tensor: object`. The name is the Python spelling, e.g.
// "Tensor | numpy.ndarray" or "collections.abc.Sequence[int]".
template <pybind11::typing::StringLiteral Name>
class Hint : public pybind11::object {
 public:
  PYBIND11_OBJECT_DEFAULT(Hint, object, accepts)

 private:
  static bool accepts(PyObject* /*any*/) { return true; }
};

}  // namespace strideweave::bindings

namespace pybind11::detail {
template <pybind11::typing::StringLiteral Name>
struct handle_type_name<strideweave::bindings::Hint<Name>> {
  static constexpr auto name = const_name(Name.name);
};
}  // namespace pybind11::detail
