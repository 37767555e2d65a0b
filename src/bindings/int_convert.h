// The one conversion of Python integers to int64 in the binding.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string_view>

namespace strideweave::bindings {

// A Python integer's value clamped to int64: overflow is -1 when the integer
// is below INT64_MIN (value INT64_MIN), +1 above INT64_MAX (value INT64_MAX).
struct ClampedInt {
  int64_t value = 0;
  int overflow = 0;
};

namespace internal_int_convert {
// to_clamped_int for any object: integer-likes through __index__, overflow.
ClampedInt to_clamped_int_any(pybind11::handle obj, std::string_view what);
}  // namespace internal_int_convert

// `obj` through __index__ (bools included: callers refusing them check
// first), clamped to int64. Throws TypeError naming `what` and the object when
// it has no __index__; an exception __index__ raises propagates unchanged.
// An exact int within int64, the common case, converts inline (hot paths such
// as __dlpack__'s max_version call this per element).
inline ClampedInt to_clamped_int(pybind11::handle obj, std::string_view what) {
  if (PyLong_CheckExact(obj.ptr())) {
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    if (overflow == 0 && value != -1) return {static_cast<int64_t>(value), 0};
  }
  return internal_int_convert::to_clamped_int_any(obj, what);
}

// to_clamped_int, refusing bools with TypeError and integers beyond int64
// with ValueError, both naming `what` and the object.
int64_t to_int64(pybind11::handle obj, std::string_view what);

}  // namespace strideweave::bindings
