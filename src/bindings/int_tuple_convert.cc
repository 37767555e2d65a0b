#include "int_tuple_convert.h"

#include <string>
#include <vector>

#include "describe.h"
#include "int_convert.h"
#include "strideweave/util/error.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

IntTuple convert(py::handle obj, std::string_view what, int depth) {
  if (PyBool_Check(obj.ptr())) {
    throw TypeError(std::string(what) + " value " + describe_object(obj) +
                    " is a bool, not an integer");
  }
  if (PyTuple_Check(obj.ptr()) || PyList_Check(obj.ptr())) {
    if (depth == IntTuple::kMaxDepth) {
      throw ValueError(std::string(what) + " nests deeper than the limit of " +
                       std::to_string(IntTuple::kMaxDepth) + " levels");
    }
    const py::tuple items = stored_items(obj);
    std::vector<IntTuple> elements;
    elements.reserve(items.size());
    for (py::handle e : items) elements.push_back(convert(e, what, depth + 1));
    return IntTuple::tuple(std::move(elements));
  }
  if (!PyIndex_Check(obj.ptr())) {
    throw TypeError(std::string(what) + " value " + describe_object(obj) +
                    " is not an integer or a tuple of integers");
  }
  const ClampedInt value = to_clamped_int(obj, what);
  if (value.overflow != 0) {
    throw ValueError(std::string(what) + " value " + object_repr(obj) +
                     " does not fit a signed 64-bit integer");
  }
  return IntTuple(value.value);
}

}  // namespace

py::tuple stored_items(py::handle list_or_tuple) {
  PyObject* items = PyList_Check(list_or_tuple.ptr())
                        ? PyList_AsTuple(list_or_tuple.ptr())
                        : PyTuple_GetSlice(list_or_tuple.ptr(), 0, PY_SSIZE_T_MAX);
  if (items == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::tuple>(items);
}

IntTuple to_int_tuple(py::handle obj, std::string_view what) { return convert(obj, what, 0); }

py::object from_int_tuple(const IntTuple& t) {
  if (t.is_leaf()) return py::int_(t.value());
  py::tuple out(t.rank());
  for (std::size_t i = 0; i < t.rank(); ++i) out[i] = from_int_tuple(t[i]);
  return out;
}

}  // namespace strideweave::bindings
