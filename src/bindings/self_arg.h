// The annotation every method bound without py::arg takes.
#pragma once

#include <pybind11/pybind11.h>

namespace strideweave::bindings {

// pybind11 loads `self` of a method bound from a member function pointer as a
// nullable pointer unless the binding describes its arguments, so
// `Layout.is_injective(None)` would call through a null pointer. With this
// annotation pybind11 records `self` as positional-only and not None, and such
// a call fails with TypeError like any other argument of the wrong type.
inline const pybind11::pos_only self_not_none{};

namespace detail {
template <class Getter>
struct getter_class;
template <class C, class R>
struct getter_class<R (C::*)() const> {
  using type = C;
};
template <class C, class R>
struct getter_class<R (C::*)() const noexcept> {
  using type = C;
};
}  // namespace detail

// The getter of a read-only property over the const member function `Getter`.
// Bound from the member function pointer itself, pybind11 would load `self`
// as a nullable pointer (`Layout.size.fget(None)` would call through a null
// pointer); this takes `self` by reference, which refuses None with TypeError.
template <auto Getter>
auto getter() {
  using C = typename detail::getter_class<decltype(Getter)>::type;
  return [](const C& self) -> decltype(auto) { return (self.*Getter)(); };
}

}  // namespace strideweave::bindings
