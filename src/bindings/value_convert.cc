#include "value_convert.h"

#include <string>

#include "describe.h"
#include "int_convert.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

Scalar to_scalar(py::handle obj) {
  if (PyTuple_Check(obj.ptr())) {  // not converted, not even its repr: it may nest arbitrarily
    throw TypeError("record field of type " + std::string(Py_TYPE(obj.ptr())->tp_name) +
                    " is not a scalar");
  }
  const Value v = to_value(obj);
  if (const bool* b = std::get_if<bool>(&v)) return *b;
  if (const int64_t* i = std::get_if<int64_t>(&v)) return *i;
  if (const double* d = std::get_if<double>(&v)) return *d;
  throw TypeError("record field " + object_repr(obj) + " is not a scalar");
}

}  // namespace

Value to_value(py::handle obj) {
  if (PyBool_Check(obj.ptr())) return obj.ptr() == Py_True;
  if (PyTuple_Check(obj.ptr())) {
    Record r;
    for (py::handle e : obj) r.fields.push_back(to_scalar(e));
    return r;
  }
  if (PyIndex_Check(obj.ptr())) {
    const ClampedInt value = to_clamped_int(obj, "value");
    if (value.overflow != 0) {
      throw ValueError("value " + object_repr(obj) + " does not fit a signed 64-bit integer");
    }
    return value.value;
  }
  // A Tensor has __float__ (one element's value) but is never read as a value.
  if (PyFloat_Check(obj.ptr()) || (py::hasattr(obj, "__float__") && !py::isinstance<Tensor>(obj))) {
    const double d = PyFloat_AsDouble(obj.ptr());
    if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    return d;
  }
  throw TypeError("value " + object_repr(obj) + " (" + type_name(obj) +
                  ") is not a bool, an integer, a float or a record tuple");
}

py::object from_value(const Value& value) {
  if (const bool* b = std::get_if<bool>(&value)) return py::bool_(*b);
  if (const int64_t* i = std::get_if<int64_t>(&value)) return py::int_(*i);
  if (const double* d = std::get_if<double>(&value)) return py::float_(*d);
  const Record& r = std::get<Record>(value);
  py::tuple out(r.fields.size());
  for (std::size_t i = 0; i < r.fields.size(); ++i) {
    out[i] = std::visit([](auto x) -> py::object { return py::cast(x); }, r.fields[i]);
  }
  return out;
}

std::vector<Value> to_values(py::handle iterable, const char* what) {
  if (!py::isinstance<py::iterable>(iterable) || py::isinstance<py::str>(iterable)) {
    throw TypeError(std::string(what) + " must be an iterable of values, not " +
                    type_name(iterable));
  }
  std::vector<Value> out;
  for (py::handle e : iterable) out.push_back(to_value(e));
  return out;
}

}  // namespace strideweave::bindings
