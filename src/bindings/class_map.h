// The one map from Python class objects to class descriptors, for every
// family of exact classes (carrier classes, move-operation classes).
//
// A built-in Python class is registered with its C++ static descriptor
// (register_class; require_registered fails the import when a core built-in
// has no Python class). A Python subclass gets one descriptor, created by its
// family's factory (register_family), when its class statement completes
// (the root's __init_subclass__, install_init_subclass) or, for a subclass
// whose __init_subclass__ does not chain, when it is first named. The map
// keeps every registered class object alive, so a descriptor always leads
// back to its class (class_for). It stays in the binding because it keys on
// Python class objects; the core sees only the descriptors.
//
// Every function requires the GIL; the map is touched only with it held.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <span>
#include <tuple>
#include <utility>

#include "strideweave/carrier/class_descriptor.h"

namespace strideweave::bindings {

// Creates the descriptor of the Python subclass `type` of a class whose
// descriptor is `parent` (of the family's kind).
using SubclassFactory = std::unique_ptr<ClassDescriptor> (*)(pybind11::handle type,
                                                             const ClassDescriptor& parent);

// Makes `factory` create the descriptors of Python subclasses in the family
// of `kind`.
void register_family(DescriptorKind kind, SubclassFactory factory);

// Registers the class object `type` with `descriptor`.
void register_class(pybind11::handle type, const ClassDescriptor& descriptor);

// Throws RuntimeError naming the first of `builtins` that has no Python class.
void require_registered(std::span<const ClassDescriptor* const> builtins);

// The descriptor registered for `type`, or nullptr; creates nothing.
const ClassDescriptor* registered_descriptor(pybind11::handle type);

// The descriptor of `type`: its registered one, or one created for a Python
// subclass (its parent the descriptor of its nearest base in a family), or
// nullptr when `type` is not a class or belongs to no family.
const ClassDescriptor* find_descriptor(pybind11::handle type);

// find_descriptor(type), throwing TypeError when it is nullptr.
const ClassDescriptor& descriptor_for_type(pybind11::handle type);

// The class object registered with `descriptor`. Throws RuntimeError when
// none is (a core class without a Python class).
pybind11::object class_for(const ClassDescriptor& descriptor);

// The body of a new-style __init__ of the bound class PyClass (C++ class C,
// trampoline Alias): constructs a C from `arguments` (a tuple of C's
// constructor arguments) when the instance's class is C's own, else an
// Alias(descriptor of the instance's exact class, arguments...), so every
// instance of a Python subclass holds its descriptor from construction on.
// `make` runs the construction (e.g. without the GIL). py::init cannot see the
// instance's exact class; this uses the hook py::init is built on, a
// constructor receiving the instance's value_and_holder.
template <class PyClass, class C, class Alias, class Tuple, class Make>
void construct_exact(pybind11::detail::value_and_holder& v_h, Tuple&& arguments, Make&& make) {
  auto* exact_type = reinterpret_cast<PyObject*>(Py_TYPE(v_h.inst));
  if (exact_type == reinterpret_cast<PyObject*>(v_h.type->type)) {
    pybind11::detail::initimpl::construct<PyClass>(
        v_h, make([&] {
          // One allocation for the object and the holder's count.
          return std::apply([](auto&&... a) { return std::make_shared<C>(std::move(a)...); },
                            std::move(arguments));
        }),
        false);
    return;
  }
  const ClassDescriptor& exact = descriptor_for_type(pybind11::handle(exact_type));
  pybind11::detail::initimpl::construct<PyClass>(
      v_h, make([&] {
        return std::apply(
            [&exact](auto&&... a) { return std::make_unique<Alias>(exact, std::move(a)...); },
            std::move(arguments));
      }),
      true);
}

// Sets root.__init_subclass__ to a classmethod giving each Python subclass
// its descriptor when its class statement completes, then chaining as
// object.__init_subclass__ expects.
void install_init_subclass(pybind11::handle root);

}  // namespace strideweave::bindings
