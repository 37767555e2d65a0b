#include "dtype_convert.h"

#include <array>
#include <string_view>
#include <utility>

#include "describe.h"
#include "strideweave/util/error.h"
#include "try_cast.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// The dtypes a foreign name may stand for, by that name (NumPy's dtype names,
// PyTorch's without "torch.", and the accepted strings alike).
constexpr std::array<std::pair<std::string_view, DType (*)()>, 3> kNamed{{
    {"float32", &DType::Float32},
    {"int32", &DType::Int32},
    {"bool", &DType::Bool},
}};

// A narrowing warned about: data of dtype `from` is inferred as `to`, which
// the string `to_string` also names.
struct Narrowing {
  std::string_view from;
  std::string_view to;
  std::string_view to_string;
};
constexpr std::array<Narrowing, 2> kNarrowed{{
    {"float64", "Float32", "float32"},
    {"int64", "Int32", "int32"},
}};

// sys.modules[name] when that module was imported; never imports it.
py::handle imported(const char* name) {
  return PyDict_GetItemString(PyImport_GetModuleDict(), name);  // borrowed, may be null
}

bool is_instance(py::handle obj, py::handle module, const char* type) {
  if (!module) return false;
  const py::object cls = module.attr(type);
  const int result = PyObject_IsInstance(obj.ptr(), cls.ptr());
  if (result < 0) throw py::error_already_set();
  return result == 1;
}

// The name of a NumPy dtype (an np.dtype, or a scalar type such as
// np.float32) or of a PyTorch dtype without "torch."; nullopt for any other
// object, an abstract NumPy scalar type (np.floating) included.
std::optional<std::string> foreign_dtype_name(py::handle obj) {
  const py::handle numpy = imported("numpy");
  if (is_instance(obj, numpy, "dtype")) return py::str(obj.attr("name")).cast<std::string>();
  if (numpy && PyType_Check(obj.ptr())) {
    const py::object generic = numpy.attr("generic");
    const int subclass = PyObject_IsSubclass(obj.ptr(), generic.ptr());
    if (subclass < 0) throw py::error_already_set();
    if (subclass == 1) {
      try {
        return py::str(numpy.attr("dtype")(obj).attr("name")).cast<std::string>();
      } catch (py::error_already_set& e) {
        if (!e.matches(PyExc_TypeError)) throw;  // np.dtype(np.floating) is refused so
        return std::nullopt;
      }
    }
  }
  if (is_instance(obj, imported("torch"), "dtype")) {
    const std::string name = py::str(obj).cast<std::string>();  // "torch.float32"
    return name.substr(name.find('.') + 1);
  }
  return std::nullopt;
}

std::optional<DType> named_dtype(std::string_view name) {
  for (const auto& [known, make] : kNamed) {
    if (name == known) return make();
  }
  return std::nullopt;
}

}  // namespace

DType to_dtype(py::handle obj, const std::string& what) {
  if (std::optional<DType> dtype = try_cast<DType>(obj)) return *std::move(dtype);
  std::optional<std::string> name;
  if (PyUnicode_CheckExact(obj.ptr())) {
    name = obj.cast<std::string>();
  } else {
    name = foreign_dtype_name(obj);
  }
  if (name) {
    if (std::optional<DType> dtype = named_dtype(*name)) return *dtype;
  }
  throw TypeError(what + " " + describe_object(obj) +
                  " is not a dtype StrideWeave accepts: pass a strideweave dtype (Float32, "
                  "Int32, Bool, Floating, Any or a compound), or the NumPy dtype, PyTorch "
                  "dtype or string 'float32', 'int32' or 'bool'");
}

std::optional<DType> to_optional_dtype(py::handle obj, const std::string& what) {
  if (obj.is_none()) return std::nullopt;
  return to_dtype(obj, what);
}

bool warn_if_narrowed(py::handle data, const char* factory) {
  const char* source = nullptr;
  std::string name;
  if (is_instance(data, imported("numpy"), "ndarray") ||
      is_instance(data, imported("numpy"), "generic")) {
    source = "NumPy";
    name = py::str(data.attr("dtype").attr("name")).cast<std::string>();
  } else if (is_instance(data, imported("torch"), "Tensor")) {
    source = "PyTorch";
    name = py::str(data.attr("dtype")).cast<std::string>();
    name = name.substr(name.find('.') + 1);
  } else {
    return false;
  }
  for (const Narrowing& n : kNarrowed) {
    if (name != n.from) continue;
    const std::string to(n.to);
    const std::string message =
        std::string(factory) + ": " + source + " " + name + " data is narrowed to " + to + " (" +
        name + " -> " + to + ") because no dtype was given; pass dtype=sw." + to + " or dtype=\"" +
        std::string(n.to_string) + "\" to convert without this warning";
    // Stack level 1: the innermost Python frame, the line that called the factory.
    if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
    return true;
  }
  return false;
}

}  // namespace strideweave::bindings
