// One caster load instead of an isinstance check followed by a cast.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <utility>

namespace strideweave::bindings {

// `obj` as T through one load of pybind11's caster without implicit
// conversions: the value when `obj` is an instance of T's bound class (or of
// a subclass), nullopt otherwise. py::isinstance<T> followed by obj.cast<T>()
// looks the type up twice, which on the hot paths of a small move and of a
// carrier's construction is a measurable share of the call.
template <class T>
std::optional<T> try_cast(pybind11::handle obj) {
  pybind11::detail::make_caster<T> caster;
  if (!caster.load(obj, /*convert=*/false)) return std::nullopt;
  return pybind11::detail::cast_op<T>(std::move(caster));
}

}  // namespace strideweave::bindings
