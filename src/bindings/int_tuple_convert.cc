#include "int_tuple_convert.h"

#include <string>
#include <vector>

#include "strideweave/util/error.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

std::string describe(py::handle obj) {
  return py::repr(obj).cast<std::string>() + " (" +
         py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>() + ")";
}

}  // namespace

IntTuple to_int_tuple(py::handle obj, std::string_view what) {
  if (PyBool_Check(obj.ptr())) {
    throw TypeError(std::string(what) + " value " + describe(obj) + " is a bool, not an integer");
  }
  if (PyTuple_Check(obj.ptr()) || PyList_Check(obj.ptr())) {
    std::vector<IntTuple> elements;
    for (py::handle e : obj) elements.push_back(to_int_tuple(e, what));
    return IntTuple::tuple(std::move(elements));
  }
  if (!PyIndex_Check(obj.ptr())) {
    throw TypeError(std::string(what) + " value " + describe(obj) +
                    " is not an integer or a tuple of integers");
  }
  const py::int_ as_int = py::reinterpret_steal<py::int_>(PyNumber_Index(obj.ptr()));
  if (!as_int) throw py::error_already_set();
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
  if (overflow != 0) {
    throw ValueError(std::string(what) + " value " + py::repr(obj).cast<std::string>() +
                     " does not fit a signed 64-bit integer");
  }
  if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
  return IntTuple(static_cast<int64_t>(value));
}

py::object from_int_tuple(const IntTuple& t) {
  if (t.is_leaf()) return py::int_(t.value());
  py::tuple out(t.rank());
  for (std::size_t i = 0; i < t.rank(); ++i) out[i] = from_int_tuple(t[i]);
  return std::move(out);
}

}  // namespace strideweave::bindings
