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

// An int64 argument of a bound function (a slot, a count, an index), read
// through __index__ like pybind11's own integer argument, except that an
// exception __index__ raises reaches the caller unchanged instead of
// becoming "incompatible function arguments". An object without __index__
// (a float, a string) still matches no overload, and so does an integer
// beyond int64.
struct Index {
  int64_t value = 0;
  operator int64_t() const noexcept { return value; }  // NOLINT: an int64 in all but name
};

}  // namespace strideweave::bindings

namespace pybind11::detail {

template <>
struct type_caster<strideweave::bindings::Index> {
  PYBIND11_TYPE_CASTER(strideweave::bindings::Index, const_name("typing.SupportsIndex"));

  bool load(handle src, bool /*convert*/) {
    if (PyFloat_Check(src.ptr()) || !PyIndex_Check(src.ptr())) return false;
    const object index = reinterpret_steal<object>(PyNumber_Index(src.ptr()));
    if (!index) throw error_already_set();  // raised by __index__: the caller's to see
    int overflow = 0;
    const long long converted = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0) return false;
    value.value = static_cast<int64_t>(converted);
    return true;
  }

  static handle cast(strideweave::bindings::Index src, return_value_policy, handle) {
    return PyLong_FromLongLong(src.value);
  }
};

}  // namespace pybind11::detail
