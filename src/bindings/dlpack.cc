// Python side of DLPack export (interop-movement): argument conversion, the
// PyCapsule and its destructor, and the keep-alive of the exporting Tensor.
// The managed tensor itself is built by the core (interop/dlpack_export).
#include "dlpack.h"

#include <limits>
#include <optional>
#include <string>

#include "strideweave/interop/dlpack_export.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";

// Converts max_version / dl_device: None, or a tuple or list of two integers.
std::optional<IntPair> to_pair(py::handle obj, const char* what) {
  if (obj.is_none()) return std::nullopt;
  if (!PyTuple_Check(obj.ptr()) && !PyList_Check(obj.ptr())) {
    throw TypeError(std::string(what) + " must be None, a tuple or a list, not " +
                    py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>());
  }
  const py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
  if (seq.size() != 2) {
    throw ValueError(std::string(what) + " must hold exactly two elements, not " +
                     std::to_string(seq.size()));
  }
  int64_t parts[2];
  for (std::size_t i = 0; i < 2; ++i) {
    const py::handle e = seq[i];
    if (PyBool_Check(e.ptr()) || !PyIndex_Check(e.ptr())) {
      throw TypeError(std::string(what) + " element " + py::repr(e).cast<std::string>() +
                      " is not an integer");
    }
    // Saturate: a ceiling or device beyond int64 compares like the extreme it
    // exceeds (a huge major version is still >= 1, a huge negative one < 0).
    const py::object as_int = py::reinterpret_steal<py::object>(PyNumber_Index(e.ptr()));
    if (!as_int) throw py::error_already_set();
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
    if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
    parts[i] = overflow > 0   ? std::numeric_limits<int64_t>::max()
               : overflow < 0 ? std::numeric_limits<int64_t>::min()
                              : static_cast<int64_t>(value);
  }
  return IntPair{parts[0], parts[1]};
}

// Holds a strong reference to a Python object until the managed tensor's
// deleter drops it: with the GIL taken by the deleter itself, and never after
// interpreter finalization (a deliberate leak, as NumPy does).
std::shared_ptr<void> python_keepalive(py::handle obj) {
  PyObject* raw = obj.inc_ref().ptr();
  return std::shared_ptr<void>(raw, [](void* p) {
    if (!Py_IsInitialized()) return;
    const PyGILState_STATE state = PyGILState_Ensure();
    Py_DECREF(static_cast<PyObject*>(p));
    PyGILState_Release(state);
  });
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

py::object to_capsule(const ExportedTensor& exported) {
  PyObject* capsule = nullptr;
  if (exported.versioned != nullptr) {
    capsule = PyCapsule_New(exported.versioned, kVersionedName, &destroy_versioned);
    if (capsule == nullptr) exported.versioned->deleter(exported.versioned);
  } else {
    capsule = PyCapsule_New(exported.legacy, kLegacyName, &destroy_legacy);
    if (capsule == nullptr) exported.legacy->deleter(exported.legacy);
  }
  if (capsule == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(capsule);
}

}  // namespace

void bind_dlpack(py::module_& m) {
  py::object tensor_class = m.attr("Tensor");
  py::class_<Tensor, py::smart_holder> cls =
      py::reinterpret_borrow<py::class_<Tensor, py::smart_holder>>(tensor_class);
  cls.def(
         "__dlpack__",
         [](py::object self, py::object /*stream*/, py::object max_version, py::object dl_device,
            py::object copy) {
           const Tensor& tensor = self.cast<const Tensor&>();
           tensor.subtensor("DLPack export (__dlpack__)");  // multi-subtensor check comes first
           ExportRequest request;
           request.max_version = to_pair(max_version, "max_version");
           request.dl_device = to_pair(dl_device, "dl_device");
           const int truth = PyObject_IsTrue(copy.ptr());
           if (truth < 0) throw py::error_already_set();
           request.copy = truth == 1;
           return to_capsule(export_dlpack(tensor, request, python_keepalive(self)));
         },
         py::arg("stream") = py::none(), py::kw_only(), py::arg("max_version") = py::none(),
         py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
         "Exports the tensor as a DLPack capsule without copying (interop-movement).")
      .def(
          "__dlpack_device__",
          [](const Tensor& tensor) {
            const IntPair device = dlpack_device(tensor);
            return py::make_tuple(device.first, device.second);
          },
          "The exporting carrier's DLPack device as (device_type, device_id).");
  m.def("_live_dlpack_exports", &live_dlpack_exports,
        "Managed tensors produced and not yet deleted (for exactly-once tests).");
}

}  // namespace strideweave::bindings
