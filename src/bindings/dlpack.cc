// Python side of DLPack export (interop-movement): argument conversion, the
// PyCapsule and its destructor, and the keep-alive of the exporting Tensor.
// The managed tensor itself is built by the core (interop/dlpack_export).
//
// __dlpack__ is a raw METH_FASTCALL | METH_KEYWORDS method rather than a
// pybind11 def: every np.from_dlpack call goes through it, and pybind11's
// generic keyword dispatch would cost more than the whole export.
#include "dlpack.h"

#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "errors.h"
#include "strideweave/interop/dlpack_export.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kDlpackOperation = "DLPack export (__dlpack__)";

std::string type_name(PyObject* obj) { return Py_TYPE(obj)->tp_name; }

// Converts max_version / dl_device: None, or a tuple or list of two integers.
std::optional<IntPair> to_pair(PyObject* obj, const char* what) {
  if (obj == nullptr || obj == Py_None) return std::nullopt;
  if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
    throw TypeError(std::string(what) + " must be None, a tuple or a list, not " + type_name(obj));
  }
  const Py_ssize_t size = PySequence_Fast_GET_SIZE(obj);
  if (size != 2) {
    throw ValueError(std::string(what) + " must hold exactly two elements, not " +
                     std::to_string(size));
  }
  int64_t parts[2];
  for (Py_ssize_t i = 0; i < 2; ++i) {
    PyObject* e = PySequence_Fast_GET_ITEM(obj, i);
    if (PyBool_Check(e) || !PyIndex_Check(e)) {
      throw TypeError(std::string(what) + " element " +
                      py::repr(py::handle(e)).cast<std::string>() + " is not an integer");
    }
    // Saturate: a ceiling or device beyond int64 compares like the extreme it
    // exceeds (a huge major version is still >= 1, a huge negative one < 0).
    py::object converted;  // only for integer-likes that are not exact ints
    if (!PyLong_CheckExact(e)) {
      converted = py::reinterpret_steal<py::object>(PyNumber_Index(e));
      if (!converted) throw py::error_already_set();
      e = converted.ptr();
    }
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(e, &overflow);
    if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
    parts[i] = overflow > 0   ? std::numeric_limits<int64_t>::max()
               : overflow < 0 ? std::numeric_limits<int64_t>::min()
                              : static_cast<int64_t>(value);
  }
  return IntPair{parts[0], parts[1]};
}

// Drops the strong reference a managed tensor holds on its exporting Tensor:
// with the GIL taken here (the deleter may run on any thread, without it),
// and never after interpreter finalization (a deliberate leak, as NumPy does).
void release_python_object(void* object) {
  if (!Py_IsInitialized()) return;
  const PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(object));
  PyGILState_Release(state);
}

// Capsule destructors: a consumed capsule was renamed used_* and its consumer
// owns the deleter, so only an unconsumed capsule deletes its managed tensor.
template <typename Managed>
void destroy_capsule(PyObject* capsule, const char* name) {
  if (!PyCapsule_IsValid(capsule, name)) return;  // consumed (renamed) capsule
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
  PyErr_Restore(type, value, traceback);
}

void destroy_legacy(PyObject* capsule) {
  destroy_capsule<dlpack::DLManagedTensor>(capsule, kLegacyName);
}

void destroy_versioned(PyObject* capsule) {
  destroy_capsule<dlpack::DLManagedTensorVersioned>(capsule, kVersionedName);
}

PyObject* to_capsule(const ExportedTensor& exported) {
  PyObject* capsule = nullptr;
  if (exported.versioned != nullptr) {
    capsule = PyCapsule_New(exported.versioned, kVersionedName, &destroy_versioned);
    if (capsule == nullptr) exported.versioned->deleter(exported.versioned);
  } else {
    capsule = PyCapsule_New(exported.legacy, kLegacyName, &destroy_legacy);
    if (capsule == nullptr) exported.legacy->deleter(exported.legacy);
  }
  if (capsule == nullptr) throw py::error_already_set();
  return capsule;
}

// The arguments of __dlpack__(stream=None, *, max_version=None,
// dl_device=None, copy=None); null where not given.
struct DlpackArguments {
  PyObject* stream = nullptr;
  PyObject* max_version = nullptr;
  PyObject* dl_device = nullptr;
  PyObject* copy = nullptr;
};

DlpackArguments parse_arguments(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs > 1) {
    throw TypeError("__dlpack__() takes at most 1 positional argument (stream), " +
                    std::to_string(nargs) + " given");
  }
  DlpackArguments parsed;
  if (nargs == 1) parsed.stream = args[0];
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, i);
    Py_ssize_t length = 0;
    const char* text = PyUnicode_AsUTF8AndSize(name, &length);
    if (text == nullptr) throw py::error_already_set();
    const std::string_view key(text, static_cast<std::size_t>(length));
    PyObject** slot = key == "max_version" ? &parsed.max_version
                      : key == "dl_device" ? &parsed.dl_device
                      : key == "copy"      ? &parsed.copy
                      : key == "stream"    ? &parsed.stream
                                           : nullptr;
    if (slot == nullptr) {
      throw TypeError("__dlpack__() got an unexpected keyword argument '" + std::string(key) + "'");
    }
    if (*slot != nullptr) {
      throw TypeError("__dlpack__() got multiple values for argument '" + std::string(key) + "'");
    }
    *slot = args[nargs + i];
  }
  return parsed;
}

// The Tensor bound to `self`. The method descriptor guarantees `self` is a
// Tensor instance; the direct lookup of its value pointer avoids pybind11's
// generic caster, which alone costs more than the rest of an export.
const Tensor& tensor_of(PyObject* self) {
  static const py::detail::type_info* const info = py::detail::get_type_info(typeid(Tensor));
  auto* instance = reinterpret_cast<py::detail::instance*>(self);
  const py::detail::value_and_holder vh = instance->get_value_and_holder(info, false);
  if (vh && vh.holder_constructed()) return *vh.template value_ptr<Tensor>();
  return py::handle(self).cast<const Tensor&>();  // raises the usual cast error
}

PyObject* dlpack_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  try {
    const Tensor& tensor = tensor_of(self);
    tensor.subtensor(kDlpackOperation);  // the multi-subtensor check comes first
    const DlpackArguments parsed = parse_arguments(args, nargs, kwnames);
    ExportRequest request;
    request.max_version = to_pair(parsed.max_version, "max_version");
    request.dl_device = to_pair(parsed.dl_device, "dl_device");
    if (parsed.copy != nullptr) {
      const int truth = PyObject_IsTrue(parsed.copy);
      if (truth < 0) throw py::error_already_set();
      request.copy = truth == 1;
    }
    // The stream is accepted in any form and ignored: export orders no work.
    const ExportedTensor exported =
        export_dlpack(tensor, request, KeepAlive{self, &release_python_object});
    Py_INCREF(self);  // the reference the keep-alive releases
    return to_capsule(exported);
  } catch (...) {
    set_python_error_from_current_exception();
    return nullptr;
  }
}

PyMethodDef dlpack_method_def = {
    "__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&dlpack_method)),
    METH_FASTCALL | METH_KEYWORDS,
    "__dlpack__(stream=None, *, max_version=None, dl_device=None, copy=None)\n\n"
    "Exports the tensor as a DLPack capsule without copying (interop-movement)."};

}  // namespace

void bind_dlpack(py::module_& m) {
  const py::object tensor_class = m.attr("Tensor");
  auto* type = reinterpret_cast<PyTypeObject*>(tensor_class.ptr());
  const py::object descriptor =
      py::reinterpret_steal<py::object>(PyDescr_NewMethod(type, &dlpack_method_def));
  if (!descriptor) throw py::error_already_set();
  tensor_class.attr("__dlpack__") = descriptor;
  tensor_class.attr("__dlpack_device__") = py::cpp_function(
      [](const Tensor& tensor) {
        const IntPair device = dlpack_device(tensor);
        return py::make_tuple(device.first, device.second);
      },
      py::name("__dlpack_device__"), py::is_method(tensor_class),
      "The exporting carrier's DLPack device as (device_type, device_id).");
  m.def("_live_dlpack_exports", &live_dlpack_exports,
        "Managed tensors produced and not yet deleted (for exactly-once tests).");
}

}  // namespace strideweave::bindings
