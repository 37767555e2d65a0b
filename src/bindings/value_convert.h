// Conversion between Python objects and element values.
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

#include "strideweave/dtype/value.h"

namespace strideweave::bindings {

// bool -> bool; an integer (__index__) -> int64; a float (__float__) ->
// double; a tuple -> Record of scalars. Throws TypeError naming the object
// otherwise and ValueError for an integer outside int64.
Value to_value(pybind11::handle obj);

// The Python object for `value`: bool, int, float, or a tuple for a record.
pybind11::object from_value(const Value& value);

// Every element of an iterable, converted with to_value.
std::vector<Value> to_values(pybind11::handle iterable, const char* what);

}  // namespace strideweave::bindings
