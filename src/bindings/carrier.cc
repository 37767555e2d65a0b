// Python binding of spec/carrier-storage: Carrier, Generic, CPU, CarrierClass
// and version tokens. Python subclasses are supported through one trampoline
// that gives each Python class its own descriptor and routes the overridable
// hooks (dlpack_info, new_like) to Python.
#include "carrier.h"

#include <pybind11/stl.h>

#include <atomic>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>

#include "buffer_convert.h"
#include "describe.h"
#include "gil.h"
#include "int_convert.h"
#include "self_arg.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/util/error.h"
#include "value_convert.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

struct PythonClassRecord {
  py::object type;  // keeps the class object, and so its address, alive
  std::unique_ptr<CarrierClass> descriptor;
};

// Python carrier classes and their descriptors; touched only with the GIL held.
std::unordered_map<PyObject*, PythonClassRecord>& python_classes() {
  static auto* classes = new std::unordered_map<PyObject*, PythonClassRecord>();
  return *classes;
}

const CarrierClass* builtin_descriptor(py::handle type) {
  if (type.is(py::type::of<CPU>())) return &CPU::static_class();
  if (type.is(py::type::of<Generic>())) return &Generic::static_class();
  if (type.is(py::type::of<Carrier>())) return &Carrier::static_class();
  return nullptr;
}

py::dict info_to_dict(const DLPackInfo& info) {
  py::dict d;
  d["pointer"] = py::int_(info.pointer);
  d["device_type"] = py::int_(info.device_type);
  d["device_id"] = py::int_(info.device_id);
  return d;
}

// Converts what a Python dlpack_info() override returned (interop-movement:
// not convertible to a dict -> TypeError, missing key -> KeyError).
DLPackInfo info_from_python(const py::object& value, const std::string& cls) {
  py::object converted;
  try {
    converted =
        py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyDict_Type))(value);
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError) && !e.matches(PyExc_ValueError)) throw;
    throw TypeError("dlpack_info() of " + cls + " returned " + object_repr(value) +
                    ", which is not convertible to a dict");
  }
  const py::dict d = converted;
  const auto get = [&](const char* key) -> py::object {
    if (!d.contains(key)) {
      throw KeyError("dlpack_info() of " + cls + " lacks the key '" + key + "'");
    }
    return d[key];
  };
  // Each value is an integer (bools refused: TypeError) within its field's
  // range (ValueError); both errors name the class, the key and the value.
  const auto integer = [&](const char* key) {
    const py::object value = get(key);
    if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr())) {
      throw TypeError("dlpack_info() of " + cls + " returned " + key + " " +
                      describe_object(value) + ", which is not an integer");
    }
    return py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
  };
  const auto out_of_range = [&](const char* key, const py::int_& value, const char* range) {
    return ValueError("dlpack_info() of " + cls + " returned " + key + " " + object_repr(value) +
                      ", which is not " + range);
  };
  const py::int_ pointer = integer("pointer");
  if (!pointer) throw py::error_already_set();
  const unsigned long long address = PyLong_AsUnsignedLongLong(pointer.ptr());
  if (address == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw out_of_range("pointer", pointer, "an address from 0 to 2**64 - 1");
  }
  const auto device_field = [&](const char* key) {
    const py::int_ value = integer(key);
    if (!value) throw py::error_already_set();
    const ClampedInt v = to_clamped_int(value, key);
    if (v.overflow != 0 || v.value < std::numeric_limits<int32_t>::min() ||
        v.value > std::numeric_limits<int32_t>::max()) {
      throw out_of_range(key, value, "a signed 32-bit integer");
    }
    return static_cast<int32_t>(v.value);
  };
  const int32_t device_type = device_field("device_type");
  const int32_t device_id = device_field("device_id");
  return DLPackInfo{static_cast<uint64_t>(address), device_type, device_id};
}

// The trampoline every Python subclass of a built-in carrier instantiates.
template <class Base>
class PyCarrier : public Base, public py::trampoline_self_life_support {
 public:
  using Base::Base;

  // Resolved on first use, which the binding makes happen with the GIL held
  // (Tensor construction, take_ownership): later calls, from any thread and
  // under any carrier mutex, only read the cached descriptor.
  const CarrierClass& carrier_class() const override {
    if (const CarrierClass* known = exact_.load(std::memory_order_acquire)) return *known;
    py::gil_scoped_acquire gil;
    const py::object self = py::cast(static_cast<const Base*>(this));
    const CarrierClass* found = &descriptor_for_type(py::type::handle_of(self));
    exact_.store(found, std::memory_order_release);
    return *found;
  }

  std::shared_ptr<Carrier> new_like() const override {
    const ExitSafeGil gil("new_like");
    gil.require();
    if (py::function override = py::get_override(static_cast<const Base*>(this), "new_like")) {
      return override().template cast<std::shared_ptr<Carrier>>();
    }
    const py::object self = py::cast(static_cast<const Base*>(this));
    return py::type::handle_of(self)(self.attr("dtype")).template cast<std::shared_ptr<Carrier>>();
  }

  DLPackInfo dlpack_info() const override {
    const ExitSafeGil gil("dlpack_info");
    gil.require();
    if (py::function override = py::get_override(static_cast<const Base*>(this), "dlpack_info")) {
      return info_from_python(override(), carrier_class().name());
    }
    return Base::dlpack_info();
  }

 private:
  mutable std::atomic<const CarrierClass*> exact_{nullptr};
};

std::optional<std::vector<Value>> optional_values(const py::object& values) {
  if (values.is_none()) return std::nullopt;
  return to_values(values, "values");
}

DType require_dtype(const py::handle& dtype, const char* carrier) {
  if (!py::isinstance<DType>(dtype)) {
    throw TypeError(std::string(carrier) + ": dtype " + object_repr(dtype) +
                    " is not a strideweave dtype");
  }
  return dtype.cast<DType>();
}

// The slot count n of a carrier constructor: None or an integer in int64.
std::optional<int64_t> slot_count(py::handle n, const char* carrier) {
  if (n.is_none()) return std::nullopt;
  return to_int64(n, std::string(carrier) + ": slot count n");
}

// A built-in carrier (or its trampoline) from converted arguments, its storage
// allocated and filled without the GIL.
template <class C>
std::unique_ptr<C> construct(const char* name, py::handle dtype, py::handle n,
                             const py::object& values, bool mutable_) {
  DType converted_dtype = require_dtype(dtype, name);
  const std::optional<int64_t> count = slot_count(n, name);
  std::optional<std::vector<Value>> converted_values = optional_values(values);
  return without_gil([&] {
    return std::make_unique<C>(std::move(converted_dtype), count, std::move(converted_values),
                               mutable_);
  });
}

// Binds one built-in carrier class with its constructor.
template <class C>
py::class_<C, Carrier, PyCarrier<C>, py::smart_holder> bind_builtin(py::module_& m,
                                                                    const char* name,
                                                                    const char* doc) {
  py::class_<C, Carrier, PyCarrier<C>, py::smart_holder> cls(m, name, doc);
  cls.def(py::init([name](py::handle dtype, py::handle n, py::object values,
                          bool mutable_) { return construct<C>(name, dtype, n, values, mutable_); },
                   [name](py::handle dtype, py::handle n, py::object values, bool mutable_) {
                     return construct<PyCarrier<C>>(name, dtype, n, values, mutable_);
                   }),
          py::arg("dtype"), py::arg("n") = py::none(), py::kw_only(),
          py::arg("values") = py::none(), py::arg("mutable") = true);
  return cls;
}

// Carrier.read_range: a list, or the slots copied into the buffer `out`.
py::object read_range(const Carrier& c, int64_t first, int64_t count, py::object out) {
  const DType& dtype = c.dtype();
  if (!out.is_none()) {
    if (!dtype.itemsize()) {
      throw TypeError("read_range out on " + c.label() + ": its dtype " + dtype.name() +
                      " has no native encoding; read a list");
    }
    const NativeBuffer buffer(out, dtype, true, "read_range out");
    const py::gil_scoped_release unlocked;
    c.read_range(first, count, buffer.bytes());
    return out;
  }
  if (!dtype.itemsize()) {
    const std::vector<Value> read = without_gil([&] { return c.read_range_values(first, count); });
    py::list values;
    for (const Value& v : read) values.append(from_value(v));
    return std::move(values);
  }
  const std::vector<std::byte> bytes = without_gil([&] { return c.read_range(first, count); });
  return decode_items(dtype, bytes.data(), count);
}

// Carrier.write_range and Lease.write_range: a buffer of native items, or an
// iterable of values.
template <class Target>
void write_range_to(Target& target, const DType& dtype, int64_t first, py::handle values) {
  if (is_buffer(values) && dtype.itemsize()) {
    const NativeBuffer buffer(values, dtype, false, "write_range values");
    const py::gil_scoped_release unlocked;
    target.write_range(first, buffer.bytes());
    return;
  }
  const std::vector<Value> converted = to_values(values, "write_range values");
  const py::gil_scoped_release unlocked;
  target.write_range_values(first, converted);
}

void write_range(Carrier& c, int64_t first, py::handle values) {
  write_range_to(c, c.dtype(), first, values);
}

}  // namespace

const CarrierClass& descriptor_for_type(py::handle type) {
  if (const CarrierClass* builtin = builtin_descriptor(type)) return *builtin;
  auto& classes = python_classes();
  if (auto it = classes.find(type.ptr()); it != classes.end()) return *it->second.descriptor;
  const py::handle carrier_type = py::type::of<Carrier>();
  const CarrierClass* parent = nullptr;
  const py::tuple mro = type.attr("__mro__");
  for (std::size_t i = 1; i < mro.size() && parent == nullptr; ++i) {
    if (PyObject_IsSubclass(mro[i].ptr(), carrier_type.ptr()) == 1) {
      parent = &descriptor_for_type(mro[i]);
    }
  }
  if (parent == nullptr) {
    throw TypeError(object_repr(type) + " is not a Carrier class");
  }
  auto descriptor =
      std::make_unique<CarrierClass>(type.attr("__qualname__").cast<std::string>(), parent);
  const CarrierClass& result = *descriptor;
  classes.emplace(type.ptr(), PythonClassRecord{py::reinterpret_borrow<py::object>(type),
                                                std::move(descriptor)});
  return result;
}

void bind_carriers(py::module_& m) {
  py::class_<CarrierClass>(m, "CarrierClass", "The runtime descriptor of one exact carrier class.")
      .def_property_readonly("name", &CarrierClass::name)
      .def_property_readonly("parent", &CarrierClass::parent, py::return_value_policy::reference)
      .def("__repr__", [](const CarrierClass& c) { return "<CarrierClass " + c.name() + ">"; })
      .def("__eq__",
           [](const CarrierClass& a, py::handle b) {
             return py::isinstance<CarrierClass>(b) && &a == &b.cast<const CarrierClass&>();
           })
      .def("__hash__", [](const CarrierClass& c) { return c.id(); });

  py::class_<VersionToken>(m, "VersionToken", "A snapshot of (carrier identity, version).")
      .def_property_readonly("version", &VersionToken::version)
      .def("is_current", &VersionToken::is_current, self_not_none)
      .def("__eq__",
           [](const VersionToken& a, py::handle b) {
             return py::isinstance<VersionToken>(b) && a == b.cast<const VersionToken&>();
           })
      .def("__hash__",
           [](const VersionToken& t) {
             return std::hash<uint64_t>{}(t.carrier_id() * 31 + t.version());
           })
      .def("__repr__", [](const VersionToken& t) {
        return "<VersionToken carrier #" + std::to_string(t.carrier_id()) + " version " +
               std::to_string(t.version()) + ">";
      });

  py::class_<Carrier, py::smart_holder>(m, "Carrier", "The base of every carrier class.")
      .def_property_readonly_static(
          "carrier_class",
          [](py::handle cls) -> const CarrierClass& { return descriptor_for_type(cls); },
          py::return_value_policy::reference)
      .def_property_readonly("dtype", &Carrier::dtype)
      .def_property_readonly("slots", &Carrier::slots)
      .def("__len__", &Carrier::slots, self_not_none)
      .def_property_readonly("version", &Carrier::version)
      .def_property_readonly("is_released", &Carrier::is_released)
      .def_property_readonly("owner", &Carrier::owner)
      .def(
          "read", [](const Carrier& c, int64_t slot) { return from_value(c.read(slot)); },
          py::arg("slot"))
      .def(
          "write",
          [](Carrier& c, int64_t slot, py::handle value) { c.write(slot, to_value(value)); },
          py::arg("slot"), py::arg("value"))
      .def("tolist", [](const Carrier& c) { return read_range(c, 0, c.slots(), py::none()); })
      .def("read_range", &read_range, py::arg("first"), py::arg("count"), py::kw_only(),
           py::arg("out") = py::none())
      .def("write_range", &write_range, py::arg("first"), py::arg("values"))
      .def("allocate", &Carrier::allocate, py::arg("n"), py::call_guard<py::gil_scoped_release>())
      .def("version_token", &Carrier::version_token, self_not_none)
      .def("release", &Carrier::release, self_not_none, py::call_guard<py::gil_scoped_release>())
      .def("is_mutable", &Carrier::is_mutable, self_not_none)
      .def_property_readonly("pinned_by", &Carrier::pinned_by)
      .def(
          "_pin",
          [](Carrier& c, std::string operation) {
            c.carrier_class();  // resolve a Python subclass's descriptor with the GIL
            return c.pin(std::move(operation));
          },
          py::arg("operation"),
          "Pins the carrier for `operation` (tests and the move machinery only); use as "
          "`with c._pin(name) as lease:`.")
      .def(
          "take_ownership",
          [](Carrier& owner, Carrier& carrier) {
            // Resolve Python descriptors while the GIL is held: the messages
            // take_ownership may build run under the carriers' mutexes.
            owner.carrier_class();
            carrier.carrier_class();
            owner.take_ownership(carrier);
          },
          py::arg("carrier"))
      .def("relinquish", &Carrier::relinquish, py::arg("carrier"))
      .def("new_like", &Carrier::new_like, self_not_none)
      .def("dlpack_info", [](const Carrier& c) { return info_to_dict(c.dlpack_info()); })
      .def("__repr__", [](const Carrier& c) {
        return "<" + c.label() + " " + c.dtype().name() + " slots=" + std::to_string(c.slots()) +
               (c.is_released() ? " released" : "") + ">";
      });

  py::class_<Lease>(m, "_Lease",
                    "The private write path of an operation pinning a carrier (Carrier._pin).")
      .def_property_readonly("operation", &Lease::operation)
      .def_property_readonly("active", &Lease::active)
      .def(
          "write", [](Lease& l, int64_t slot, py::handle value) { l.write(slot, to_value(value)); },
          py::arg("slot"), py::arg("value"))
      .def(
          "write_range",
          [](Lease& l, int64_t first, py::handle values) {
            write_range_to(l, l.carrier().dtype(), first, values);
          },
          py::arg("first"), py::arg("values"))
      .def("allocate", &Lease::allocate, py::arg("n"), py::call_guard<py::gil_scoped_release>())
      .def("end", &Lease::end, self_not_none)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Lease& l, const py::args&) { l.end(); });

  bind_builtin<Generic>(m, "Generic",
                        "Element storage for any dtype, abstract ones included; no pointer.");
  bind_builtin<CPU>(m, "CPU", "Slots in one 64-byte-aligned host buffer; DLPack device (1, 0).")
      .def("pointer", [](const CPU& c) { return reinterpret_cast<uintptr_t>(c.data()); });
}

}  // namespace strideweave::bindings
