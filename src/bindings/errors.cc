#include "errors.h"

#include "python_exception.h"
#include "strideweave/util/error.h"

namespace strideweave::bindings {

namespace {

PyObject* python_type(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kTypeError:
      return PyExc_TypeError;
    case ErrorKind::kValueError:
      return PyExc_ValueError;
    case ErrorKind::kIndexError:
      return PyExc_IndexError;
    case ErrorKind::kKeyError:
      return PyExc_KeyError;
    case ErrorKind::kRuntimeError:
      return PyExc_RuntimeError;
    case ErrorKind::kBufferError:
      return PyExc_BufferError;
    case ErrorKind::kNotImplementedError:
      return PyExc_NotImplementedError;
    case ErrorKind::kMemoryError:
      return PyExc_MemoryError;
    case ErrorKind::kOSError:
      return PyExc_OSError;
  }
  return PyExc_RuntimeError;
}

// Sets the Python error for `e`. An OSError becomes OSError(errno, message,
// path), which Python turns into the subclass of that errno
// (FileNotFoundError, PermissionError, ...) with errno, strerror and filename
// set; the message and the path are decoded as file names are.
void set_python_error(const Error& e) {
  if (e.kind() != ErrorKind::kOSError) {
    PyErr_SetString(python_type(e.kind()), e.what());
    return;
  }
  const auto& os_error = static_cast<const OSError&>(e);
  PyObject* error = PyObject_CallFunction(PyExc_OSError, "iNN", os_error.error_number(),
                                          PyUnicode_DecodeFSDefault(e.what()),
                                          PyUnicode_DecodeFSDefault(os_error.path().c_str()));
  if (error == nullptr) return;
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error)), error);
  Py_DECREF(error);
}

// Raises the identical exception object a PythonException carries.
void set_python_error(const PythonException& e) {
  const pybind11::object object = e.object();
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(object.ptr())), object.ptr());
}

}  // namespace

void set_python_error_from_current_exception() noexcept {
  try {
    throw;
  } catch (pybind11::error_already_set& e) {
    e.restore();
  } catch (const PythonException& e) {
    set_python_error(e);
  } catch (const Error& e) {
    set_python_error(e);
  } catch (const pybind11::builtin_exception& e) {
    e.set_error();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

void register_error_translation(pybind11::module_& /*m*/) {
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PythonException& e) {
      set_python_error(e);
    } catch (const Error& e) {
      set_python_error(e);
    }
  });
}

}  // namespace strideweave::bindings
