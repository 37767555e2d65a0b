// Translation of core errors into Python exceptions.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

// Registers the one translation table from strideweave::Error kinds to the
// built-in Python exceptions of the same name.
void register_error_translation(pybind11::module_& m);

}  // namespace strideweave::bindings
