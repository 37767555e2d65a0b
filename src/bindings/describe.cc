#include "describe.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

constexpr std::size_t kMaxReprLength = 200;

}  // namespace

std::string object_repr(py::handle obj) {
  const py::object text = py::reinterpret_steal<py::object>(PyObject_Repr(obj.ptr()));
  Py_ssize_t length = 0;
  const char* utf8 = text ? PyUnicode_AsUTF8AndSize(text.ptr(), &length) : nullptr;
  if (utf8 == nullptr) {
    PyErr_Clear();
    return "<" + type_name(obj) + " object>";
  }
  std::string out(utf8, static_cast<std::size_t>(length));
  if (out.size() > kMaxReprLength) {
    // Cut at a character boundary (never inside a UTF-8 sequence).
    std::size_t cut = kMaxReprLength;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
    out += "...";
  }
  return out;
}

std::string type_name(py::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }

std::string describe_object(py::handle obj) {
  return object_repr(obj) + " (" + type_name(obj) + ")";
}

}  // namespace strideweave::bindings
