// How error messages name a Python object: the one place the binding turns
// user objects into message text.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace strideweave::bindings {

// repr(obj) for a message: never raises (a __repr__ that fails, or a value
// nested too deeply to repr, gives "<TypeName object>" and leaves no error
// set) and is cut to at most 200 characters.
std::string object_repr(pybind11::handle obj);

// The exact type's name, e.g. "list" or "numpy.ndarray".
std::string type_name(pybind11::handle obj);

// "object_repr(obj) (type_name(obj))": how messages name an offending object.
std::string describe_object(pybind11::handle obj);

}  // namespace strideweave::bindings
