#include "class_map.h"

#include <array>
#include <string>
#include <unordered_map>

#include "describe.h"
#include "strideweave/util/error.h"
#include "type_hint.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

struct ClassMap {
  // Class object -> descriptor; the objects held keep the classes, and so
  // their addresses, alive.
  std::unordered_map<PyObject*, std::pair<py::object, const ClassDescriptor*>> descriptors;
  // Descriptor -> class object (borrowed from `descriptors`).
  std::unordered_map<const ClassDescriptor*, PyObject*> classes;
  std::array<SubclassFactory, 2> factories{};
};

// Never destroyed: class objects may be named while the interpreter exits.
ClassMap& class_map() {
  static auto* map = new ClassMap();
  return *map;
}

SubclassFactory& factory_of(DescriptorKind kind) {
  return class_map().factories[kind == DescriptorKind::kCarrier ? 0 : 1];
}

}  // namespace

void register_family(DescriptorKind kind, SubclassFactory factory) { factory_of(kind) = factory; }

void register_class(py::handle type, const ClassDescriptor& descriptor) {
  ClassMap& map = class_map();
  map.descriptors.insert_or_assign(
      type.ptr(), std::pair{py::reinterpret_borrow<py::object>(type), &descriptor});
  map.classes.insert_or_assign(&descriptor, type.ptr());
}

void require_registered(std::span<const ClassDescriptor* const> builtins) {
  for (const ClassDescriptor* builtin : builtins) {
    if (!class_map().classes.contains(builtin)) {
      throw RuntimeError(std::string("the built-in ") + kind_name(builtin->kind()) + " class " +
                         builtin->name() + " has no Python class");
    }
  }
}

const ClassDescriptor* registered_descriptor(py::handle type) {
  const auto& descriptors = class_map().descriptors;
  const auto it = descriptors.find(type.ptr());
  return it == descriptors.end() ? nullptr : it->second.second;
}

const ClassDescriptor* find_descriptor(py::handle type) {
  if (!PyType_Check(type.ptr())) return nullptr;
  if (const ClassDescriptor* known = registered_descriptor(type)) return known;
  const py::tuple mro = type.attr("__mro__");
  for (std::size_t i = 1; i < mro.size(); ++i) {
    if (const ClassDescriptor* parent = find_descriptor(mro[i])) {
      const ClassDescriptor& created = *factory_of(parent->kind())(type, *parent).release();
      register_class(type, created);
      return &created;
    }
  }
  return nullptr;
}

const ClassDescriptor& descriptor_for_type(py::handle type) {
  if (const ClassDescriptor* found = find_descriptor(type)) return *found;
  throw TypeError(object_repr(type) + " is not a Carrier or MoveOperation class");
}

py::object class_for(const ClassDescriptor& descriptor) {
  const auto& classes = class_map().classes;
  const auto it = classes.find(&descriptor);
  if (it == classes.end()) {
    throw RuntimeError("the " + std::string(kind_name(descriptor.kind())) + " class " +
                       descriptor.name() + " has no Python class");
  }
  return py::reinterpret_borrow<py::object>(it->second);
}

void install_init_subclass(py::handle root) {
  const py::object root_type = py::reinterpret_borrow<py::object>(root);
  root.attr("__init_subclass__") = py::reinterpret_steal<py::object>(PyClassMethod_New(
      py::cpp_function(
          [root_type](Hint<"type"> cls, const py::kwargs& kwargs) {
            descriptor_for_type(cls);
            const py::object base = py::module_::import("builtins").attr("super")(root_type, cls);
            base.attr("__init_subclass__")(**kwargs);
          },
          py::name("__init_subclass__"), py::arg("cls"),
          py::doc(
              R"doc(Gives a new subclass its own class descriptor as its class statement completes.

A carrier subclass's descriptor starts open. A move-operation subclass's
descriptor is pinned to the carrier classes its ``source_class`` and
``destination_class`` attributes name then (None: unpinned).

Parameters
----------
cls : type
    The new subclass.
**kwargs
    Passed on to the next ``__init_subclass__`` in the method resolution order.

Raises
------
TypeError
    When a move-operation subclass's ``source_class`` or ``destination_class``
    is neither None nor a Carrier subclass.
)doc"))
          .ptr()));
}

}  // namespace strideweave::bindings
