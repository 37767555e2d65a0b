#include "int_convert.h"

#include <limits>
#include <string>

#include "describe.h"
#include "strideweave/util/error.h"

namespace py = pybind11;

namespace strideweave::bindings {

ClampedInt internal_int_convert::to_clamped_int_any(py::handle obj, std::string_view what) {
  py::object as_int;  // only for integer-likes that are not exact ints
  PyObject* value = obj.ptr();
  if (!PyLong_CheckExact(value)) {
    if (!PyIndex_Check(value)) {
      throw TypeError(std::string(what) + " " + describe_object(obj) + " is not an integer");
    }
    as_int = py::reinterpret_steal<py::object>(PyNumber_Index(value));
    if (!as_int) throw py::error_already_set();
    value = as_int.ptr();
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow > 0) return {std::numeric_limits<int64_t>::max(), 1};
  if (overflow < 0) return {std::numeric_limits<int64_t>::min(), -1};
  return {static_cast<int64_t>(v), 0};
}

int64_t to_int64(py::handle obj, std::string_view what) {
  if (PyBool_Check(obj.ptr())) {
    throw TypeError(std::string(what) + " " + describe_object(obj) + " is a bool, not an integer");
  }
  const ClampedInt clamped = to_clamped_int(obj, what);
  if (clamped.overflow != 0) {
    throw ValueError(std::string(what) + " " + object_repr(obj) +
                     " does not fit a signed 64-bit integer");
  }
  return clamped.value;
}

}  // namespace strideweave::bindings
