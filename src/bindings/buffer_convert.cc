#include "buffer_convert.h"

#include <cstring>
#include <string>
#include <string_view>

#include "describe.h"
#include "strideweave/dtype/value.h"
#include "strideweave/util/error.h"
#include "value_convert.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// The struct format code of a scalar dtype's native encoding.
char format_code(const DType& dtype) {
  switch (dtype.kind()) {
    case DTypeKind::kBool:
      return '?';
    case DTypeKind::kInt32:
      return 'i';
    case DTypeKind::kFloat32:
      return 'f';
    default:
      return '\0';
  }
}

bool format_matches(std::string_view format, Py_ssize_t itemsize, const DType& dtype) {
  if (!format.empty() && (format[0] == '@' || format[0] == '=' || format[0] == '<')) {
    format.remove_prefix(1);
  }
  if (format == "B" || format == "b" || format == "c") return true;
  if (static_cast<std::size_t>(itemsize) != *dtype.itemsize()) return false;
  if (dtype.is_compound()) return true;
  return format.size() == 1 && format[0] == format_code(dtype);
}

// A list of `count` items; load(i) returns a new reference to item i.
template <class Load>
py::list build_list(int64_t count, Load&& load) {
  py::list out(count);
  for (int64_t i = 0; i < count; ++i) PyList_SET_ITEM(out.ptr(), i, load(i));
  return out;
}

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

PyObject* new_ref(PyObject* o) {
  if (o == nullptr) throw py::error_already_set();
  return o;
}

py::object nest_level(const DType& dtype, const std::byte*& data,
                      const std::vector<int64_t>& extents, std::size_t level,
                      std::size_t itemsize) {
  if (level + 1 == extents.size()) {
    py::list out = decode_items(dtype, data, extents[level]);
    data += static_cast<std::size_t>(extents[level]) * itemsize;
    return out;
  }
  py::list out(extents[level]);
  for (int64_t i = 0; i < extents[level]; ++i) {
    PyList_SET_ITEM(out.ptr(), i,
                    nest_level(dtype, data, extents, level + 1, itemsize).release().ptr());
  }
  return out;
}

}  // namespace

bool is_buffer(py::handle obj) {
  return !PyList_Check(obj.ptr()) && !PyTuple_Check(obj.ptr()) && PyObject_CheckBuffer(obj.ptr());
}

NativeBuffer::NativeBuffer(py::handle obj, const DType& dtype, bool writable, const char* what) {
  const int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj.ptr(), &view_, flags) != 0) {
    PyErr_Clear();
    view_.obj = nullptr;
    throw TypeError(std::string(what) + ": " + describe_object(obj) + " is not a " +
                    (writable ? "writable " : "") + "C-contiguous buffer");
  }
  const std::string_view format = view_.format != nullptr ? view_.format : "B";
  if (!format_matches(format, view_.itemsize, dtype)) {
    const std::string message = std::string(what) + ": a buffer of format '" + std::string(format) +
                                "' cannot hold " + dtype.name() + " items (format '" +
                                std::string(1, format_code(dtype)) + "' or raw bytes)";
    PyBuffer_Release(&view_);
    throw TypeError(message);
  }
}

NativeBuffer::~NativeBuffer() {
  if (view_.obj != nullptr) PyBuffer_Release(&view_);
}

py::list decode_items(const DType& dtype, const std::byte* data, int64_t count) {
  switch (dtype.kind()) {
    case DTypeKind::kBool:
      return build_list(count, [&](int64_t i) {
        PyObject* b = data[i] != std::byte{0} ? Py_True : Py_False;
        Py_INCREF(b);
        return b;
      });
    case DTypeKind::kInt32:
      return build_list(
          count, [&](int64_t i) { return new_ref(PyLong_FromLong(load<int32_t>(data + i * 4))); });
    case DTypeKind::kFloat32:
      return build_list(count, [&](int64_t i) {
        return new_ref(PyFloat_FromDouble(static_cast<double>(load<float>(data + i * 4))));
      });
    default: {
      const std::size_t itemsize = *dtype.itemsize();
      return build_list(count, [&](int64_t i) {
        return from_value(decode(dtype, data + static_cast<std::size_t>(i) * itemsize))
            .release()
            .ptr();
      });
    }
  }
}

py::object nest_items(const DType& dtype, const std::byte* data,
                      const std::vector<int64_t>& extents) {
  if (extents.empty()) return decode_items(dtype, data, 1)[0];
  return nest_level(dtype, data, extents, 0, *dtype.itemsize());
}

}  // namespace strideweave::bindings
