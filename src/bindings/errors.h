// Translation of core errors into Python exceptions.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

// Registers the one translation table from strideweave::Error kinds to the
// built-in Python exceptions of the same name.
void register_error_translation(pybind11::module_& m);

// For raw CPython entry points (outside pybind11's dispatch): sets the Python
// error for the exception being handled, with the same table. Call it only
// from inside a catch block.
void set_python_error_from_current_exception() noexcept;

}  // namespace strideweave::bindings
