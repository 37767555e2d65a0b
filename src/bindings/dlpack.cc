// Python side of DLPack export (interop-movement): argument conversion, the
// PyCapsule and its destructor, and the keep-alive of the exporting Tensor.
// The managed tensor itself is built by the core (interop/dlpack_export).
//
// __dlpack__ is a raw METH_FASTCALL | METH_KEYWORDS method rather than a
// pybind11 def: every np.from_dlpack call goes through it, and pybind11's
// generic keyword dispatch would cost more than the whole export.
#include "dlpack.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "describe.h"
#include "errors.h"
#include "gil.h"
#include "int_convert.h"
#include "strideweave/exec/core_mutex.h"
#include "strideweave/interop/dlpack_export.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kDlpackOperation = "DLPack export (__dlpack__)";

// Converts max_version / dl_device: a tuple or list of two integers (the
// caller handles None). A list is read from a tuple snapshot: an element's
// __index__ may run code that changes the list while it is read.
std::optional<IntPair> to_pair(PyObject* obj, std::string_view what) {
  py::object snapshot;
  if (PyList_Check(obj)) {
    snapshot = py::reinterpret_steal<py::object>(PyList_AsTuple(obj));
    if (!snapshot) throw py::error_already_set();
    obj = snapshot.ptr();
  } else if (!PyTuple_Check(obj)) {
    throw TypeError(std::string(what) + " must be None, a tuple or a list, not " + type_name(obj));
  }
  const Py_ssize_t size = PyTuple_GET_SIZE(obj);
  if (size != 2) {
    throw ValueError(std::string(what) + " must hold exactly two elements, not " +
                     std::to_string(size));
  }
  int64_t parts[2];
  for (Py_ssize_t i = 0; i < 2; ++i) {
    PyObject* e = PyTuple_GET_ITEM(obj, i);
    if (PyBool_Check(e)) {
      throw TypeError(std::string(what) + " element " + describe_object(e) +
                      " is a bool, not an integer");
    }
    // Clamped: a ceiling or device beyond int64 compares like the extreme it
    // exceeds (a huge major version is still >= 1, a huge negative one < 0).
    parts[i] = to_clamped_int(e, what).value;
  }
  return IntPair{parts[0], parts[1]};
}

// Managed tensors produced by __dlpack__ and not yet deleted; changed and read
// only with the GIL held (for tests of exactly-once deletion).
int64_t live_exports = 0;

// The ExportOwner of a capsule's managed tensor: pymalloc memory (as NumPy's
// own exports use) and a strong reference to the exporting Tensor. allocate
// runs inside __dlpack__, with the GIL held.
void* allocate_export(void* /*tensor*/, std::size_t bytes) noexcept {
  void* block = PyMem_Malloc(bytes);
  if (block != nullptr) ++live_exports;
  return block;
}

// The deleter may run on any thread, with or without the GIL: the GIL is
// taken here, exit-safely, to free the block and drop the Tensor; when it
// cannot be (the interpreter is exiting and this thread does not hold it),
// nothing is done (a deliberate leak, as NumPy does). It must not run under
// a core lock (ExitSafeGil refuses, which ends the process here).
// The usual caller, a consumer freeing its array, holds the GIL already: then
// nothing is taken (the check of core locks stays).
void release_export(void* tensor, void* block) noexcept {
  const auto free_export = [&] {
    PyMem_Free(block);
    --live_exports;
    Py_DECREF(static_cast<PyObject*>(tensor));
  };
  if (Py_IsInitialized() != 0 && PyGILState_Check() == 1 && core_locks_held() == 0) {
    free_export();
    return;
  }
  const ExitSafeGil gil("the DLPack deleter");
  if (gil) free_export();
}

// Capsule destructors: a consumed capsule was renamed used_* and its consumer
// owns the deleter, so only an unconsumed capsule deletes its managed tensor.
// The capsule still carries our static name (the same pointer) exactly when
// no consumer renamed it. The deleter leaves a pending exception alone: it
// only frees memory and drops a reference (finalizers that run Python code
// save and restore the exception themselves).
template <typename Managed>
void destroy_capsule(PyObject* capsule, const char* name) {
  if (PyCapsule_GetName(capsule) != name) return;  // consumed (renamed) capsule
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed->deleter != nullptr) managed->deleter(managed);
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
// dl_device=None, copy=None), indexed by Slot; null where not given.
enum Slot : uint8_t { kStream, kMaxVersion, kDlDevice, kCopy, kSlotCount };
using DlpackArguments = std::array<PyObject*, kSlotCount>;

Slot slot_named(PyObject* name) {
  Py_ssize_t length = 0;
  const char* text = PyUnicode_AsUTF8AndSize(name, &length);
  if (text == nullptr) throw py::error_already_set();
  const std::string_view key(text, static_cast<std::size_t>(length));
  if (key == "max_version") return kMaxVersion;
  if (key == "dl_device") return kDlDevice;
  if (key == "copy") return kCopy;
  if (key == "stream") return kStream;
  throw TypeError("__dlpack__() got an unexpected keyword argument '" + std::string(key) + "'");
}

[[noreturn]] void throw_multiple_values(PyObject* name) {
  throw TypeError("__dlpack__() got multiple values for argument '" +
                  py::str(py::handle(name)).cast<std::string>() + "'");
}

// The slot of each keyword name in `kwnames`. A call site passes the same
// kwnames tuple on every call (a code constant in Python, a static tuple in
// NumPy's from_dlpack), so the last tuple resolved is kept with its slots,
// and a strong reference keeps the tuple, and so its identity, alive. Other
// tuples are matched by name. Guarded by the GIL.
const Slot* keyword_slots(PyObject* kwnames) {
  static PyObject* cached_names = nullptr;
  static Slot cached_slots[kSlotCount];
  if (kwnames == cached_names) return cached_slots;
  Slot slots[kSlotCount];
  const Py_ssize_t count = PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, i);
    const Slot slot = slot_named(name);
    // Only kSlotCount distinct names exist, so a duplicate stops the loop in time.
    for (Py_ssize_t j = 0; j < i; ++j) {
      if (slots[j] == slot) throw_multiple_values(name);
    }
    slots[i] = slot;
  }
  std::copy(slots, slots + count, cached_slots);
  Py_INCREF(kwnames);
  Py_XSETREF(cached_names, kwnames);
  return cached_slots;
}

// An argument that is neither omitted nor None.
bool is_given(PyObject* argument) { return argument != nullptr && argument != Py_None; }

DlpackArguments parse_arguments(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs > 1) {
    throw TypeError("__dlpack__() takes at most 1 positional argument (stream), " +
                    std::to_string(nargs) + " given");
  }
  DlpackArguments parsed{};
  if (nargs == 1) parsed[kStream] = args[0];
  if (kwnames == nullptr) return parsed;
  const Slot* slots = keyword_slots(kwnames);
  const Py_ssize_t count = PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject*& slot = parsed[slots[i]];
    if (slot != nullptr) throw_multiple_values(PyTuple_GET_ITEM(kwnames, i));
    slot = args[nargs + i];
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
    // The multi-subtensor check comes first, before any argument is read.
    if (tensor.is_multi_subtensor()) tensor.subtensor(kDlpackOperation);
    const DlpackArguments parsed = parse_arguments(args, nargs, kwnames);
    ExportRequest request;
    if (is_given(parsed[kMaxVersion])) {
      request.max_version = to_pair(parsed[kMaxVersion], "max_version");
    }
    if (is_given(parsed[kDlDevice])) request.dl_device = to_pair(parsed[kDlDevice], "dl_device");
    if (is_given(parsed[kCopy])) {
      const int truth = PyObject_IsTrue(parsed[kCopy]);
      if (truth < 0) throw py::error_already_set();
      request.copy = truth == 1;
    }
    // The stream is accepted in any form and ignored: export orders no work.
    const ExportedTensor exported =
        export_dlpack(tensor, request, ExportOwner{self, &allocate_export, &release_export});
    Py_INCREF(self);  // the reference release_export drops
    return to_capsule(exported);
  } catch (...) {
    set_python_error_from_current_exception();
    return nullptr;
  }
}

PyMethodDef dlpack_method_def = {
    "__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&dlpack_method)),
    METH_FASTCALL | METH_KEYWORDS,
    "__dlpack__(stream=None, *, max_version=None, dl_device=None, copy=None) -> "
    "types.CapsuleType\n\n"
    "Exports the tensor as a DLPack capsule aliasing its carrier's storage, without copying.\n\n"
    "The capsule's shape and strides (in elements) are the layout's leaf modes; its data "
    "pointer is the carrier's and its byte offset the tensor's offset. Only Float32 and Int32 "
    "tensors of one subtensor over a carrier whose ``dlpack_info()`` opts in export.\n\n"
    "Parameters\n----------\n"
    "stream : Any, optional\n    The consumer's stream; accepted in any form and unused (export "
    "does no work a stream could order).\n"
    "max_version : tuple of int, optional\n    The highest (major, minor) DLPack version the "
    "consumer reads: a versioned 1.0 capsule when major >= 1, the legacy capsule otherwise.\n"
    "dl_device : tuple of int, optional\n    The (device_type, device_id) wanted; must be the "
    "carrier's.\n"
    "copy : bool, optional\n    A true value demands a copy, which is not implemented.\n\n"
    "Returns\n-------\nPyCapsule\n    A ``dltensor_versioned`` or ``dltensor`` capsule.\n\n"
    "Raises\n------\n"
    "BufferError\n    When the carrier does not export, the dtype is not Float32 or Int32, "
    "``copy`` is true, ``dl_device`` is another device, or the data pointer is null.\n"
    "TypeError\n    When ``max_version`` or ``dl_device`` is not None, a tuple or a list, or "
    "an argument is unexpected.\n"
    "ValueError\n    When ``max_version`` or ``dl_device`` does not hold two elements, or a "
    "version is negative.\n"};

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
      R"doc(The exporting carrier's DLPack device as ``(device_type, device_id)``.

It depends only on the carrier's ``dlpack_info()`` and the single-subtensor
requirement, so it answers for a dtype ``__dlpack__`` would refuse.

Returns
-------
tuple of int
    ``(1, 0)`` for host memory.

Raises
------
BufferError
    When the carrier does not export.
NotImplementedError
    For a multi-subtensor tensor.
)doc");
  m.def(
      "_live_dlpack_exports", [] { return live_exports; },
      "Managed tensors produced and not yet deleted (for exactly-once tests).");
}

}  // namespace strideweave::bindings
