// Python integers as int64: the one conversion every binding file uses.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>

namespace strideweave::bindings {

// The value of `obj` (an int or any object with __index__; the caller decides
// whether bools are allowed) as an int64, and whether it lies beyond int64:
// overflow is +1 above the range, -1 below it, 0 within (value then exact;
// otherwise value is the nearest bound). Throws error_already_set when
// __index__ raises or returns a non-int.
struct Int64Value {
  int64_t value = 0;
  int overflow = 0;
};
Int64Value index_to_int64(PyObject* obj);

}  // namespace strideweave::bindings
