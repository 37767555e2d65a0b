#include "python_exception.h"

#include "errors.h"
#include "gil.h"

namespace py = pybind11;

namespace strideweave::bindings {

PythonException::PythonException(py::error_already_set& error) : what_(error.what()) {
  PyObject* value = error.value().ptr();
  Py_INCREF(value);
  object_ = std::shared_ptr<PyObject>(value, [](PyObject* object) {
    const ExitSafeGil gil("releasing a Python exception");
    if (gil) Py_DECREF(object);
  });
}

py::object PythonException::object() const {
  return py::reinterpret_borrow<py::object>(object_.get());
}

py::object exception_object(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const PythonException& e) {
    return e.object();
  } catch (...) {
    set_python_error_from_current_exception();
  }
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (traceback != nullptr) PyException_SetTraceback(value, traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
  return py::reinterpret_steal<py::object>(value);
}

void raise_object(const py::object& exception) {
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
  throw py::error_already_set();
}

}  // namespace strideweave::bindings
