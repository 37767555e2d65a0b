// Python binding of spec/carrier-storage: Carrier, Generic, CPU, Metal, FileBacked,
// BlockDeviceCarrier, ClassDescriptor and version tokens.
//
// Exact classes (class_map.h): every built-in Python class is registered
// with its C++ static descriptor by bind_carrier_class (module import fails
// when a core built-in has no Python class); a Python subclass gets its own
// descriptor when its class statement completes (Carrier.__init_subclass__),
// and each instance is constructed as the trampoline PyCarrier holding that
// descriptor, so naming an instance's class never needs the GIL. The
// trampoline routes the overridable hooks (dlpack_info, new_like) to Python.
#include "carrier.h"

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "buffer_convert.h"
#include "class_map.h"
#include "describe.h"
#include "dtype_convert.h"
#include "gil.h"
#include "int_convert.h"
#include "self_arg.h"
#include "strideweave/carrier/block_device.h"
#include "strideweave/carrier/builtins.h"
#include "strideweave/carrier/cpu.h"
#include "strideweave/carrier/file_backed.h"
#include "strideweave/carrier/generic.h"
#include "strideweave/carrier/lease.h"
#include "strideweave/carrier/metal.h"
#include "strideweave/compose/builtins.h"
#include "strideweave/util/error.h"
#include "value_convert.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// The descriptor of a Python subclass of a carrier class.
std::unique_ptr<ClassDescriptor> carrier_subclass(py::handle type, const ClassDescriptor& parent) {
  return ClassDescriptor::carrier(type.attr("__qualname__").cast<std::string>(), &parent,
                                  ClassDescriptor::Definition::kOpen);
}

const char* definition_state_name(ClassDescriptor::Definition state) {
  switch (state) {
    case ClassDescriptor::Definition::kOpen:
      return "open";
    case ClassDescriptor::Definition::kFree:
      return "definition-free";
    case ClassDescriptor::Definition::kBacked:
      return "definition-backed";
  }
  return "open";
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
    const py::object field = get(key);
    if (PyBool_Check(field.ptr()) || !PyIndex_Check(field.ptr())) {
      throw TypeError("dlpack_info() of " + cls + " returned " + key + " " +
                      describe_object(field) + ", which is not an integer");
    }
    return py::reinterpret_steal<py::int_>(PyNumber_Index(field.ptr()));
  };
  const auto out_of_range = [&](const char* key, const py::int_& field, const char* range) {
    return ValueError("dlpack_info() of " + cls + " returned " + key + " " + object_repr(field) +
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
    const py::int_ field = integer(key);
    if (!field) throw py::error_already_set();
    const ClampedInt v = to_clamped_int(field, key);
    if (v.overflow != 0 || v.value < std::numeric_limits<int32_t>::min() ||
        v.value > std::numeric_limits<int32_t>::max()) {
      throw out_of_range(key, field, "a signed 32-bit integer");
    }
    return static_cast<int32_t>(v.value);
  };
  const int32_t device_type = device_field("device_type");
  const int32_t device_id = device_field("device_id");
  return DLPackInfo{static_cast<uint64_t>(address), device_type, device_id};
}

// The trampoline every instance of a Python subclass of a built-in carrier
// is, holding its exact class's descriptor from construction on.
template <class Base>
class PyCarrier : public Base, public py::trampoline_self_life_support {
 public:
  template <class... Args>
  explicit PyCarrier(const ClassDescriptor& exact, Args&&... args)
      : Base(std::forward<Args>(args)...), exact_(exact) {}

  const ClassDescriptor& carrier_class() const override { return exact_; }

  // The new carrier may be dropped by core code on any thread (a move's
  // backward creates gradient storage through it): its last release takes the
  // GIL exit-safely.
  std::shared_ptr<Carrier> new_like() const override {
    const ExitSafeGil gil("new_like");
    gil.require();
    std::shared_ptr<Carrier> made;
    if (py::function override = py::get_override(static_cast<const Base*>(this), "new_like")) {
      const py::object returned = override();
      if (!returned.is_none() && !py::isinstance<Carrier>(returned)) {
        throw TypeError("new_like() of " + exact_.name() + " returned " +
                        describe_object(returned) + ", not a Carrier");
      }
      // None stays null: the library's caller refuses it (Carrier::checked_new_like).
      made = returned.template cast<std::shared_ptr<Carrier>>();
    } else {
      const py::object self = py::cast(static_cast<const Base*>(this));
      made =
          py::type::handle_of(self)(self.attr("dtype")).template cast<std::shared_ptr<Carrier>>();
    }
    return released_with_gil(std::move(made), "releasing a carrier made by new_like");
  }

  DLPackInfo dlpack_info() const override {
    const ExitSafeGil gil("dlpack_info");
    gil.require();
    if (py::function override = py::get_override(static_cast<const Base*>(this), "dlpack_info")) {
      return info_from_python(override(), exact_.name());
    }
    return Base::dlpack_info();
  }

 private:
  const ClassDescriptor& exact_;
};

template <class C>
using CarrierPyClass = py::class_<C, Carrier, PyCarrier<C>, py::smart_holder>;

// Binds the built-in carrier class C, registered with its static descriptor.
template <class C>
CarrierPyClass<C> bind_carrier_class(py::module_& m, const char* name, const char* doc) {
  CarrierPyClass<C> cls(m, name, doc);
  register_class(cls, C::static_class());
  return cls;
}

// Defines C's __init__(Args...). `convert` turns the Python arguments into a
// tuple of C's constructor arguments; construct_exact (class_map.h) makes a C
// or, for a Python subclass, a PyCarrier<C> holding its descriptor. The
// construction runs without the GIL when `releases_gil(arguments)` says it
// allocates, fills or opens storage; a carrier made empty keeps the GIL, as
// the accessors do (docs/threading.md, "What releases the GIL").
template <class C, class... Args, class Convert, class ReleasesGil, class... Extra>
void def_carrier_init(CarrierPyClass<C>& cls, Convert convert, ReleasesGil releases_gil,
                      const Extra&... extra) {
  cls.def(
      "__init__",
      [convert, releases_gil](py::detail::value_and_holder& v_h, Args... args) {
        auto arguments = convert(std::move(args)...);
        const bool release = releases_gil(std::as_const(arguments));
        construct_exact<CarrierPyClass<C>, C, PyCarrier<C>>(
            v_h, std::move(arguments),
            [release](auto make) { return release ? without_gil(make) : make(); });
      },
      py::detail::is_new_style_constructor(), extra...);
}

// The constructions that always release the GIL (a file carrier opens its file).
constexpr auto kAlwaysReleasesGil = [](const auto&) { return true; };

std::optional<std::vector<Value>> optional_values(const py::object& values) {
  if (values.is_none()) return std::nullopt;
  return to_values(values, "values");
}

DType require_dtype(const py::handle& dtype, const char* carrier) {
  return to_dtype(dtype, std::string(carrier) + ": dtype");
}

// The slot count n of a carrier constructor: None or an integer in int64.
std::optional<int64_t> slot_count(py::handle n, const char* carrier) {
  if (n.is_none()) return std::nullopt;
  return to_int64(n, std::string(carrier) + ": slot count n");
}

// The path of a file carrier: None, or a str, bytes or os.PathLike naming a
// file. Throws TypeError naming the carrier and the object for anything else,
// ValueError naming the carrier when the path holds a NUL byte (no file has
// such a name).
std::optional<std::filesystem::path> file_path_arg(py::handle path, const char* carrier) {
  if (path.is_none()) return std::nullopt;
  const py::object fspath = py::reinterpret_steal<py::object>(PyOS_FSPath(path.ptr()));
  if (!fspath) {
    PyErr_Clear();
    throw TypeError(std::string(carrier) + ": path " + describe_object(path) +
                    " is neither a str, bytes nor an os.PathLike");
  }
  std::string bytes;
  if (PyBytes_Check(fspath.ptr())) {
    bytes = fspath.cast<std::string>();
  } else {
    const py::object encoded =
        py::reinterpret_steal<py::object>(PyUnicode_EncodeFSDefault(fspath.ptr()));
    if (!encoded) throw py::error_already_set();
    bytes = encoded.cast<std::string>();
  }
  if (bytes.find('\0') != std::string::npos) {
    throw ValueError(std::string(carrier) + ": path " + object_repr(fspath) +
                     " contains a NUL byte, which no file name can hold");
  }
  return std::filesystem::path(bytes);
}

// BlockDeviceCarrier's block_size: None or an integer in int64.
std::optional<int64_t> block_size_arg(py::handle block_size) {
  if (block_size.is_none()) return std::nullopt;
  return to_int64(block_size, "BlockDeviceCarrier: block_size");
}

// Binds a built-in carrier class constructed as
// Cls(dtype, n=None, <more>..., *, values=None, mutable=True): `More` are the
// C++ types of the class's own parameters between n and values, `more` their
// py::arg declarations.
template <class C, class... More, class... MoreArgs>
CarrierPyClass<C> bind_builtin(py::module_& m, const char* name, const char* doc,
                               const MoreArgs&... more) {
  CarrierPyClass<C> cls = bind_carrier_class<C>(m, name, doc);
  def_carrier_init<C, py::handle, py::handle, More..., py::object, bool>(
      cls,
      [name](py::handle dtype, py::handle n, More... own, py::object values, bool mutable_) {
        return std::make_tuple(require_dtype(dtype, name), slot_count(n, name), std::move(own)...,
                               optional_values(values), mutable_);
      },
      // Slots to allocate (n above 0) or values to fill: without the GIL.
      [](const auto& arguments) {
        constexpr std::size_t kValues = std::tuple_size_v<std::decay_t<decltype(arguments)>> - 2;
        return std::get<1>(arguments).value_or(0) > 0 || std::get<kValues>(arguments).has_value();
      },
      py::arg("dtype"), py::arg("n") = py::none(), more..., py::kw_only(),
      py::arg("values") = py::none(), py::arg("mutable") = true);
  return cls;
}

// Carrier.read_range: a list, or the slots copied into the buffer `out`.
py::object read_range(const Carrier& c, Index first, Index count, py::object out) {
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
    return values;
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

void write_range(Carrier& c, Index first, py::handle values) {
  write_range_to(c, c.dtype(), first, values);
}

}  // namespace

void bind_carriers(py::module_& m) {
  py::class_<ClassDescriptor>(m, "ClassDescriptor",
                              "The runtime descriptor of one exact carrier or move-operation "
                              "class.")
      .def_property_readonly("name", getter<&ClassDescriptor::name>())
      .def_property_readonly("parent", getter<&ClassDescriptor::parent>(),
                             py::return_value_policy::reference)
      .def_property_readonly("kind", [](const ClassDescriptor& c) { return kind_name(c.kind()); })
      .def_property_readonly(
          "definition_state",
          [](const ClassDescriptor& c) { return definition_state_name(c.definition_state()); })
      .def_property_readonly("pinned_source", getter<&ClassDescriptor::pinned_source>(),
                             py::return_value_policy::reference)
      .def_property_readonly("pinned_destination", getter<&ClassDescriptor::pinned_destination>(),
                             py::return_value_policy::reference)
      .def("__repr__",
           [](const ClassDescriptor& c) {
             return std::string("<ClassDescriptor ") + kind_name(c.kind()) + " " + c.name() + ">";
           })
      .def("__eq__",
           [](const ClassDescriptor& a, py::handle b) {
             return py::isinstance<ClassDescriptor>(b) && &a == &b.cast<const ClassDescriptor&>();
           })
      .def("__hash__", [](const ClassDescriptor& c) { return c.id(); });

  py::class_<VersionToken>(m, "VersionToken", "A snapshot of (carrier identity, version).")
      .def_property_readonly("version", getter<&VersionToken::version>())
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

  py::class_<Carrier, py::smart_holder> carrier(m, "Carrier", "The base of every carrier class.");
  register_family(DescriptorKind::kCarrier, &carrier_subclass);
  register_class(carrier, Carrier::static_class());
  install_init_subclass(carrier);
  carrier
      .def_property_readonly_static(
          "carrier_class",
          [](py::handle cls) -> const ClassDescriptor& { return descriptor_for_type(cls); },
          py::return_value_policy::reference)
      .def_property_readonly("dtype", getter<&Carrier::dtype>())
      .def_property_readonly("slots", getter<&Carrier::slots>())
      .def("__len__", &Carrier::slots, self_not_none)
      .def_property_readonly("version", getter<&Carrier::version>())
      .def_property_readonly("moves_received", getter<&Carrier::moves_received>())
      .def_property_readonly("is_released", getter<&Carrier::is_released>())
      .def_property_readonly("owner", getter<&Carrier::owner>())
      .def(
          "read", [](const Carrier& c, Index slot) { return from_value(c.read(slot)); },
          py::arg("slot"))
      .def(
          "write", [](Carrier& c, Index slot, py::handle value) { c.write(slot, to_value(value)); },
          py::arg("slot"), py::arg("value"))
      .def("tolist", [](const Carrier& c) { return read_range(c, {0}, {c.slots()}, py::none()); })
      .def("read_range", &read_range, py::arg("first"), py::arg("count"), py::kw_only(),
           py::arg("out") = py::none())
      .def("write_range", &write_range, py::arg("first"), py::arg("values"))
      .def("allocate", &Carrier::allocate, py::arg("n"), py::call_guard<py::gil_scoped_release>())
      .def("version_token", &Carrier::version_token, self_not_none)
      .def("release", &Carrier::release, self_not_none, py::call_guard<py::gil_scoped_release>())
      .def("is_mutable", &Carrier::is_mutable, self_not_none)
      .def_property_readonly("pinned_by", getter<&Carrier::pinned_by>())
      .def(
          "_pin",
          [](Carrier& c, std::string operation, bool writing) {
            return c.pin(std::move(operation),
                         writing ? Carrier::PinAccess::kWriting : Carrier::PinAccess::kReadable);
          },
          py::arg("operation"), py::kw_only(), py::arg("writing") = false,
          "Pins the carrier for `operation` (tests and the move machinery only); use as "
          "`with c._pin(name) as lease:`. writing=True also refuses reads on other threads.")
      .def("take_ownership", &Carrier::take_ownership, py::arg("carrier"))
      .def("relinquish", &Carrier::relinquish, py::arg("carrier"))
      .def("new_like", &Carrier::new_like, self_not_none)
      .def("dlpack_info", [](const Carrier& c) { return info_to_dict(c.dlpack_info()); })
      .def("__repr__", [](const Carrier& c) {
        return "<" + c.label() + " " + c.dtype().name() + " slots=" + std::to_string(c.slots()) +
               (c.is_released() ? " released" : "") + ">";
      });

  py::class_<Lease>(m, "_Lease",
                    "The private write path of an operation pinning a carrier (Carrier._pin).")
      .def_property_readonly("operation", getter<&Lease::operation>())
      .def_property_readonly("active", getter<&Lease::active>())
      .def(
          "write", [](Lease& l, Index slot, py::handle value) { l.write(slot, to_value(value)); },
          py::arg("slot"), py::arg("value"))
      .def(
          "write_range",
          [](Lease& l, Index first, py::handle values) {
            write_range_to(l, l.carrier().dtype(), first, values);
          },
          py::arg("first"), py::arg("values"))
      .def("allocate", &Lease::allocate, py::arg("n"), py::call_guard<py::gil_scoped_release>())
      .def("end", &Lease::end, self_not_none)
      .def("release", &Lease::release, self_not_none,
           "Releases the pinned carrier and ends the pin in one step.")
      .def(
          "_admitted",
          [](const Lease& l, const py::function& hook) {
            const Lease::Admission admission = l.admit();
            return hook();
          },
          py::arg("hook"),
          "Calls hook() with the public entry points of the pinned carrier admitted on this "
          "thread as writes through the lease (what the move machinery does around _copy).")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Lease& l, const py::args&) { l.end(); });

  bind_builtin<Generic>(m, "Generic",
                        "Element storage for any dtype, abstract ones included; no pointer.");
  bind_builtin<CPU>(m, "CPU", "Slots in one 64-byte-aligned host buffer; DLPack device (1, 0).")
      .def("pointer", [](const CPU& c) { return reinterpret_cast<uintptr_t>(c.data()); });
  CarrierPyClass<FileBacked> file_backed = bind_carrier_class<FileBacked>(
      m, "FileBacked",
      "Slots in a file, native encoding, no header; path=None makes a temporary file removed "
      "at release and at exit.");
  // bind_builtin's signature, with the path converted by file_path_arg.
  def_carrier_init<FileBacked, py::handle, py::handle, py::handle, py::object, bool>(
      file_backed,
      [](py::handle dtype, py::handle n, py::handle path, py::object values, bool mutable_) {
        return std::make_tuple(require_dtype(dtype, "FileBacked"), slot_count(n, "FileBacked"),
                               file_path_arg(path, "FileBacked"), optional_values(values),
                               mutable_);
      },
      kAlwaysReleasesGil, py::arg("dtype"), py::arg("n") = py::none(), py::arg("path") = py::none(),
      py::kw_only(), py::arg("values") = py::none(), py::arg("mutable") = true);
  file_backed.def_property_readonly("path", getter<&FileBacked::path>());
  bind_builtin<Metal>(m, "Metal",
                      "Slots in a device buffer of the Metal device queue (the emulated device "
                      "here); Float32, Int32 and Bool; reads and writes synchronize; no DLPack.");
  CarrierPyClass<BlockDeviceCarrier> block_device = bind_carrier_class<BlockDeviceCarrier>(
      m, "BlockDeviceCarrier",
      "Slots on a file or block device in whole aligned blocks (O_DIRECT, else buffered); "
      "path=None makes a temporary file removed at release and at exit.");
  // bind_builtin's signature with block_size after path, converted like n.
  def_carrier_init<BlockDeviceCarrier, py::handle, py::handle, py::handle, py::handle, py::object,
                   bool>(
      block_device,
      [](py::handle dtype, py::handle n, py::handle path, py::handle block_size, py::object values,
         bool mutable_) {
        return std::make_tuple(require_dtype(dtype, "BlockDeviceCarrier"),
                               slot_count(n, "BlockDeviceCarrier"),
                               file_path_arg(path, "BlockDeviceCarrier"),
                               block_size_arg(block_size), optional_values(values), mutable_);
      },
      kAlwaysReleasesGil, py::arg("dtype"), py::arg("n") = py::none(), py::arg("path") = py::none(),
      py::arg("block_size") = py::none(), py::kw_only(), py::arg("values") = py::none(),
      py::arg("mutable") = true);
  block_device.def_property_readonly("path", getter<&BlockDeviceCarrier::path>())
      .def_property_readonly("direct_io", getter<&BlockDeviceCarrier::direct_io>())
      .def_property_readonly("block_size", getter<&BlockDeviceCarrier::io_block_size>())
      .def_property_readonly("alignment", getter<&BlockDeviceCarrier::io_alignment>());

  require_registered(builtin_carrier_classes());
  m.def(
      "_builtin_carrier_classes",
      [] {
        py::list descriptors;
        for (const auto& builtins :
             {builtin_carrier_classes(), builtin_composite_carrier_classes()}) {
          for (const ClassDescriptor* builtin : builtins) {
            descriptors.append(py::cast(builtin, py::return_value_policy::reference));
          }
        }
        return descriptors;
      },
      "The static descriptors of the core's built-in carrier classes, composites included "
      "(tests).");
}

}  // namespace strideweave::bindings
