#include "py_int.h"

#include <limits>

namespace py = pybind11;

namespace strideweave::bindings {

Int64Value index_to_int64(PyObject* obj) {
  py::object converted;  // only for integer-likes that are not exact ints
  if (!PyLong_CheckExact(obj)) {
    converted = py::reinterpret_steal<py::object>(PyNumber_Index(obj));
    if (!converted) throw py::error_already_set();
    obj = converted.ptr();
  }
  Int64Value out;
  const long long value = PyLong_AsLongLongAndOverflow(obj, &out.overflow);
  if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
  out.value = out.overflow > 0   ? std::numeric_limits<int64_t>::max()
              : out.overflow < 0 ? std::numeric_limits<int64_t>::min()
                                 : static_cast<int64_t>(value);
  return out;
}

}  // namespace strideweave::bindings
