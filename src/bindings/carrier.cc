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
#include "py_carrier.h"
#include "python_storage.h"
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
#include "try_cast.h"
#include "type_hint.h"
#include "value_convert.h"

namespace py = pybind11;

namespace strideweave::bindings {

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

std::optional<std::vector<Value>> optional_values(const py::object& values) {
  if (values.is_none()) return std::nullopt;
  return to_values(values, "values");
}

DType require_dtype(const py::handle& dtype, const char* carrier) {
  // A strideweave dtype, the usual argument, needs no message built.
  if (std::optional<DType> given = try_cast<DType>(dtype)) return *std::move(given);
  return to_dtype(dtype, std::string(carrier) + ": dtype");
}

// The slot count n of a carrier constructor: None or an integer in int64.
std::optional<int64_t> slot_count(py::handle n, const char* carrier) {
  if (n.is_none()) return std::nullopt;
  return to_int64(n, std::string(carrier) + ": slot count n");
}

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

// The constructions that always release the GIL (a file carrier opens its file).
constexpr auto kAlwaysReleasesGil = [](const auto&) { return true; };

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
// py::arg declarations; `init_doc` documents the constructor.
template <class C, class... More, class... MoreArgs>
CarrierPyClass<C> bind_builtin(py::module_& m, const char* name, const char* doc,
                               const char* init_doc, const MoreArgs&... more) {
  CarrierPyClass<C> cls = bind_carrier_class<C>(m, name, doc);
  def_carrier_init<C, DTypeArg, SlotCountArg, More..., ValuesArg, bool>(
      cls,
      [name](DTypeArg dtype, SlotCountArg n, More... own, ValuesArg values, bool mutable_) {
        return std::make_tuple(require_dtype(dtype, name), slot_count(n, name), std::move(own)...,
                               optional_values(values), mutable_);
      },
      // Slots to allocate (n above 0) or values to fill: without the GIL.
      [](const auto& arguments) {
        constexpr std::size_t kValues = std::tuple_size_v<std::decay_t<decltype(arguments)>> - 2;
        return std::get<1>(arguments).value_or(0) > 0 || std::get<kValues>(arguments).has_value();
      },
      py::arg("dtype"), py::arg("n") = py::none(), more..., py::kw_only(),
      py::arg("values") = py::none(), py::arg("mutable") = true, init_doc);
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
    const GilReleased unlocked;
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
    const GilReleased unlocked;
    target.write_range(first, buffer.bytes());
    return;
  }
  const std::vector<Value> converted = to_values(values, "write_range values");
  const GilReleased unlocked;
  target.write_range_values(first, converted);
}

void write_range(Carrier& c, Index first,
                 Hint<"collections.abc.Iterable | collections.abc.Buffer"> values) {
  write_range_to(c, c.dtype(), first, values);
}

}  // namespace

void bind_carriers(py::module_& m) {
  py::class_<ClassDescriptor>(m, "ClassDescriptor", R"doc(
The runtime descriptor of one exact carrier or move-operation class.

Every carrier class and every move-operation class, built-in or a Python
subclass, has exactly one descriptor: ``Cls.carrier_class`` (or
``Cls.operation_class``) reports it on the class and on its instances. Two
objects have the same descriptor exactly when their exact classes are the same
class object; registries and dispatch key on descriptors. A built-in class
reports the static descriptor of its C++ class, sealed definition-free; a
Python subclass receives a new one, starting open, when its class statement
completes. Descriptors are not constructed from Python.
)doc")
      .def_property_readonly("name", getter<&ClassDescriptor::name>(),
                             "str: the class's ``__qualname__`` (the C++ name for a built-in).")
      .def_property_readonly("parent", getter<&ClassDescriptor::parent>(),
                             py::return_value_policy::reference,
                             "ClassDescriptor | None: the descriptor of the parent class, None "
                             "for the roots Carrier and MoveOperation.")
      .def_property_readonly(
          "kind", [](const ClassDescriptor& c) { return kind_name(c.kind()); },
          "str: ``'carrier'`` or ``'move operation'``.")
      .def_property_readonly(
          "definition_state",
          [](const ClassDescriptor& c) { return definition_state_name(c.definition_state()); },
          R"doc(str: ``'open'``, ``'definition-free'`` or ``'definition-backed'``.

A Python carrier subclass starts open; a legacy move-registry call that names it
seals it definition-free, ``define_carrier`` seals it definition-backed. Built-in
classes are sealed from the start.)doc")
      .def_property_readonly("pinned_source", getter<&ClassDescriptor::pinned_source>(),
                             py::return_value_policy::reference,
                             "ClassDescriptor | None: for a move-operation class, the carrier "
                             "class pinned as its source; None for carrier classes and an "
                             "unpinned source.")
      .def_property_readonly("pinned_destination", getter<&ClassDescriptor::pinned_destination>(),
                             py::return_value_policy::reference,
                             "ClassDescriptor | None: for a move-operation class, the carrier "
                             "class pinned as its destination; None for carrier classes and an "
                             "unpinned destination.")
      .def(
          "__repr__",
          [](const ClassDescriptor& c) {
            return std::string("<ClassDescriptor ") + kind_name(c.kind()) + " " + c.name() + ">";
          },
          "``<ClassDescriptor KIND NAME>``.")
      .def(
          "__eq__",
          [](const ClassDescriptor& a, Hint<"ClassDescriptor | typing.Any"> b) {
            return py::isinstance<ClassDescriptor>(b) && &a == &b.cast<const ClassDescriptor&>();
          },
          py::arg("other"), R"doc(Whether ``other`` is this same descriptor.

Parameters
----------
other : ClassDescriptor or any object
    The object to compare with.

Returns
-------
bool
    True exactly when ``other`` is the descriptor of the same exact class;
    False for anything else, never NotImplemented.

Raises
------
None
    Comparison never raises.
)doc")
      .def(
          "__hash__", [](const ClassDescriptor& c) { return c.id(); },
          "The descriptor's process-unique id, consistent with ``__eq__``.");

  py::class_<VersionToken>(m, "VersionToken", R"doc(
A snapshot of (carrier identity, version), from ``Carrier.version_token()``.

Two tokens compare equal exactly when they name the same carrier object at the
same version; ``is_current()`` says whether the carrier still has that version.
Writes that bypass the entry points (through a DLPack export or
``CPU.pointer()``) are invisible to versions and tokens.
)doc")
      .def_property_readonly("version", getter<&VersionToken::version>(),
                             "int: the carrier's version when the token was taken.")
      .def("is_current", &VersionToken::is_current, self_not_none,
           R"doc(Whether the carrier still has the token's version.

Returns
-------
bool
    True while no successful write, range write or allocation has changed the
    carrier since the token was taken.
)doc")
      .def(
          "__eq__",
          [](const VersionToken& a, Hint<"VersionToken | typing.Any"> b) {
            return py::isinstance<VersionToken>(b) && a == b.cast<const VersionToken&>();
          },
          py::arg("other"), R"doc(Whether ``other`` names the same carrier at the same version.

Parameters
----------
other : VersionToken or any object
    The object to compare with.

Returns
-------
bool
    True exactly when ``other`` is a VersionToken of the same carrier object
    and the same version; False for anything else.

Raises
------
None
    Comparison never raises.
)doc")
      .def(
          "__hash__",
          [](const VersionToken& t) {
            return std::hash<uint64_t>{}(t.carrier_id() * 31 + t.version());
          },
          "A hash of (carrier identity, version), consistent with ``__eq__``.")
      .def(
          "__repr__",
          [](const VersionToken& t) {
            return "<VersionToken carrier #" + std::to_string(t.carrier_id()) + " version " +
                   std::to_string(t.version()) + ">";
          },
          "``<VersionToken carrier #ID version N>``.");

  py::class_<Carrier, py::smart_holder> carrier(m, "Carrier", R"doc(
The base of every carrier class: storage of slots of one dtype.

A carrier has a dtype fixed at construction and a capacity in slots. Its entry
points (``read``, ``write``, the range forms, ``allocate``) convert values to
the dtype and count every successful mutation in ``version``. It can be pinned
by an operation in progress (a pending move), owned by another carrier (a
composite's parts), constructed immutable and released; each of these makes it
not publicly mutable. Carriers are safe to use from any thread; storage I/O
runs without the GIL. Carrier itself is abstract: construct a built-in class
(``CPU``, ``Generic``, ``Metal``, ``FileBacked``, ``BlockDeviceCarrier``) or
subclass one; a Python subclass gets its own class descriptor and may override
``new_like`` and ``dlpack_info``. ``carrier_class``, on the class and on its
instances, is that descriptor (a ClassDescriptor) of the exact class.
)doc");
  register_family(DescriptorKind::kCarrier, &carrier_subclass);
  register_class(carrier, Carrier::static_class());
  install_init_subclass(carrier);
  carrier
      .def_property_readonly_static(
          "carrier_class",
          [](py::handle cls) -> const ClassDescriptor& { return descriptor_for_type(cls); },
          py::return_value_policy::reference,
          "ClassDescriptor: the descriptor of the exact class, on the class and on its "
          "instances.")
      .def_property_readonly("dtype", getter<&Carrier::dtype>(),
                             "DType: the dtype of every slot, fixed at construction.")
      .def_property_readonly("slots", getter<&Carrier::slots>(),
                             "int: the capacity in slots; 0 for an empty or released carrier.")
      .def("__len__", &Carrier::slots, self_not_none, R"doc(The capacity in slots, as ``slots``.

Returns
-------
int
    The number of slots; 0 for an empty or released carrier.
)doc")
      .def_property_readonly("version", getter<&Carrier::version>(),
                             "int: the mutation count: every successful write, range write and "
                             "allocation adds exactly one; reads, failed entry points, exports, "
                             "release and successful moves leave it unchanged (a failed move "
                             "that wrote this destination adds one).")
      .def_property_readonly("moves_received", getter<&Carrier::moves_received>(),
                             "int: the successful moves this carrier received as their "
                             "destination, counted at each move's terminal commit; backward "
                             "refuses a saved input whose carrier received a move since.")
      .def_property_readonly("is_released", getter<&Carrier::is_released>(),
                             "bool: whether ``release()`` has relinquished the storage.")
      .def_property_readonly("owner", getter<&Carrier::owner>(),
                             "Carrier | None: the carrier that took ownership of this one "
                             "(``take_ownership``), or None.")
      .def(
          "read", [](const Carrier& c, Index slot)->Hint<"bool | int | float | tuple"> {
            return from_value(c.read(slot));
          },
          py::arg("slot"), R"doc(The value in one slot.

Parameters
----------
slot : int
    The slot index, in ``[0, slots)``; any object with ``__index__``.

Returns
-------
bool or int or float or tuple
    The value: a bool for Bool, an int for Int32, a float for Float32 and
    Floating, as written for Any, a tuple of field values for a compound dtype.

Raises
------
IndexError
    When ``slot`` is outside ``[0, slots)``.
TypeError
    When ``slot`` is not an integer.
RuntimeError
    When the carrier is released, or pinned for writing by a pending move.
OSError
    When a file carrier's read fails.
)doc")
      .def(
          "write",
          [](Carrier& c, Index slot, Hint<"bool | int | float | tuple"> value) {
            c.write(slot, to_value(value));
          },
          py::arg("slot"), py::arg("value"),
          R"doc(Stores ``value``, converted to the dtype, in one slot.

A Float32 slot stores the value rounded to single precision. A successful write
increments ``version`` by one.

Parameters
----------
slot : int
    The slot index, in ``[0, slots)``.
value : bool or int or float or tuple
    The value; a tuple of field values for a compound dtype.

Raises
------
IndexError
    When ``slot`` is outside ``[0, slots)``.
TypeError
    When ``value`` is of the wrong kind for the dtype (a bool for a numeric
    dtype, a float for Int32, a non-bool for Bool).
ValueError
    When an integer is out of the dtype's range.
RuntimeError
    When the carrier is not publicly mutable: constructed with
    ``mutable=False``, owned, pinned or released.
OSError
    When a file carrier's write fails.
)doc")
      .def(
          "tolist", [](const Carrier& c)->Hint<"list[bool | int | float | tuple]"> {
            return read_range(c, {0}, {c.slots()}, py::none());
          },
          R"doc(Every slot's value, in one snapshot.

Returns
-------
list
    The values of slots ``0 .. slots - 1``, in the form ``read`` returns them,
    read under one hold of the carrier's lock.

Raises
------
RuntimeError
    When the carrier is released, or pinned for writing by a pending move.
)doc")
      .def(
          "read_range",
          [](const Carrier& c, Index first, Index count, Hint<"collections.abc.Buffer | None"> out)
              ->Hint<"list | collections.abc.Buffer"> { return read_range(c, first, count, out); },
          py::arg("first"), py::arg("count"), py::kw_only(), py::arg("out") = py::none(),
          R"doc(The values of slots ``[first, first + count)``.

The slots are copied: the carrier keeps no reference to ``out``.

Parameters
----------
first : int
    The first slot.
count : int
    The number of slots, 0 or more.
out : buffer, optional
    A writable C-contiguous buffer (a NumPy array, bytearray or memoryview) of
    the dtype's own format, or of raw bytes, holding exactly ``count`` items;
    it receives the items in native encoding.

Returns
-------
list or buffer
    The values as a list (in the form ``read`` returns them), or ``out`` when
    given.

Raises
------
IndexError
    When the range is outside ``[0, slots)``.
ValueError
    When ``count`` is negative, or ``out`` does not hold exactly ``count``
    items.
TypeError
    When ``out`` is read-only, not C-contiguous or of another format, or is
    given for a dtype without an item size.
RuntimeError
    When the carrier is released, or pinned for writing by a pending move.
)doc")
      .def("write_range", &write_range, py::arg("first"), py::arg("values"),
           R"doc(Stores ``values[k]``, converted as ``write`` converts it, in slot ``first + k``.

Every value is converted, and every Bool byte of a buffer checked, before any slot
changes, so a failed call leaves the slots and the version unchanged. A
successful call increments ``version`` by exactly one, whatever the count.

Parameters
----------
first : int
    The first slot.
values : iterable or buffer
    An iterable of values or, for a dtype with an item size, a C-contiguous
    buffer of the dtype's format (or raw bytes) holding items in native
    encoding. It is copied.

Raises
------
IndexError
    When the range is outside ``[0, slots)``.
TypeError
    When a value is of the wrong kind, or a buffer is not C-contiguous or of
    another format.
ValueError
    When an integer is out of range, a Bool byte is neither 0 nor 1, or a
    buffer is not a whole number of items.
RuntimeError
    When the carrier is not publicly mutable (immutable, owned, pinned,
    released).
OSError
    When a file carrier's write fails.
)doc")
      .def("allocate", &Carrier::allocate, py::arg("n"), py::call_guard<GilReleased>(),
           R"doc(Gives an empty carrier ``n`` slots holding the dtype's zero.

Runs without the GIL; increments ``version`` by one.

Parameters
----------
n : int
    The slot count, 0 or more.

Raises
------
ValueError
    When ``n`` is negative.
RuntimeError
    When the carrier already holds slots, its class does not support
    allocation, or it is not publicly mutable (immutable, owned, pinned,
    released).
MemoryError
    When the storage cannot be allocated.
OSError
    When a file carrier cannot extend its file.
)doc")
      .def("version_token", &Carrier::version_token, self_not_none,
           R"doc(A token of this carrier's identity and current version.

Returns
-------
VersionToken
    Equal to a later token exactly while the version has not changed.
)doc")
      .def("release", &Carrier::release, self_not_none, py::call_guard<GilReleased>(),
           R"doc(Relinquishes the storage; idempotent.

Frees the storage the carrier owns (a file carrier closes its file and removes
its temporary file), marks it released and sets ``slots`` to 0; the version is
unchanged and releasing again does nothing. It does not wait for DLPack
consumers: an array built from an export keeps pointing at storage the carrier
no longer holds (see docs/dlpack-export.md). Runs without the GIL.

Raises
------
RuntimeError
    When the carrier is pinned by an operation in progress, or owned by
    another carrier (its owner releases it).
)doc")
      .def("is_mutable", &Carrier::is_mutable, self_not_none,
           R"doc(Whether the public write entry points accept writes now.

Returns
-------
bool
    False when the carrier was constructed with ``mutable=False``, is owned,
    pinned or released; True otherwise.
)doc")
      .def_property_readonly("pinned_by", getter<&Carrier::pinned_by>(),
                             "str | None: the name of the operation pinning the carrier (a "
                             "pending move), or None.")
      .def(
          "_pin",
          [](Carrier& c, std::string operation, bool writing) {
            return c.pin(std::move(operation),
                         writing ? Carrier::PinAccess::kWriting : Carrier::PinAccess::kReadable);
          },
          py::arg("operation"), py::kw_only(), py::arg("writing") = false,
          "Pins the carrier for `operation` (tests and the move machinery only); use as "
          "`with c._pin(name) as lease:`. writing=True also refuses reads on other threads.")
      .def(
          "take_ownership",
          [](Carrier& self, Carrier& owned) { without_gil([&] { self.take_ownership(owned); }); },
          py::arg("carrier"),
          R"doc(Makes this carrier the owner of ``carrier``.

An owned carrier is not publicly mutable and cannot be released through its own
``release()``; ``carrier.owner`` reports the owner.

Parameters
----------
carrier : Carrier
    The carrier to own.

Raises
------
ValueError
    When ``carrier`` is this carrier, or owns this carrier directly or through
    the carriers it owns (ownership never forms a cycle).
RuntimeError
    When ``carrier`` is released, already owned, or pinned.
TypeError
    When ``carrier`` is not a Carrier.
)doc")
      .def(
          "relinquish",
          [](Carrier& self, Carrier& owned) { without_gil([&] { self.relinquish(owned); }); },
          py::arg("carrier"),
          R"doc(Ends this carrier's ownership of ``carrier``.

Parameters
----------
carrier : Carrier
    A carrier this carrier owns.

Raises
------
ValueError
    When this carrier does not own ``carrier``.
RuntimeError
    When this carrier is a composite that keeps ``carrier`` as one of its
    parts.
TypeError
    When ``carrier`` is not a Carrier.
)doc")
      .def("new_like", &Carrier::new_like, self_not_none,
           R"doc(A new, empty carrier of the same exact class and dtype.

The result is publicly mutable and unowned; ``new_like`` works on a released
carrier too. For a Python subclass the default constructs
``type(self)(self.dtype)``; a subclass whose constructor takes other arguments
overrides it (the library calls it for a move's backward and for composites,
and checks what it returns).

Returns
-------
Carrier
    The new empty carrier.
)doc")
      .def(
          "dlpack_info", [](const Carrier& c) { return info_to_dict(c.dlpack_info()); },
          R"doc(The DLPack opt-in hook: where the storage is, for DLPack export.

Overridable by Python subclasses. CPU returns its buffer's address with
``device_type`` 1 and ``device_id`` 0 (pointer 0 once released).

Returns
-------
dict[str, int]
    The keys ``pointer``, ``device_type`` and ``device_id``.

Raises
------
BufferError
    By default (the class does not support DLPack export), naming the class.
)doc")
      .def(
          "__repr__",
          [](const Carrier& c) {
            return "<" + c.label() + " " + c.dtype().name() +
                   " slots=" + std::to_string(c.slots()) + (c.is_released() ? " released" : "") +
                   ">";
          },
          "``<LABEL DTYPE slots=N>``, with ``released`` once released.");

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
      .def("allocate", &Lease::allocate, py::arg("n"), py::call_guard<GilReleased>())
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

  bind_builtin<Generic>(m, "Generic", R"doc(
Element storage for any dtype, the abstract ones included; no pointer.

Each slot holds an element value: a Floating slot a double-precision float, an
Any slot a bool, an integer or a float as written, a compound slot a tuple of
its field values. Generic keeps the default ``dlpack_info``, so it does not
export through DLPack.
)doc",
                        R"doc(A Generic carrier of ``dtype``.

With ``n``, the carrier holds ``n`` slots of the dtype's zero; with ``values``,
one slot per value holding it; with neither, it is empty (zero slots) and can
be given slots once with ``allocate``.

Parameters
----------
dtype : DType or numpy.dtype or torch.dtype or str
    The dtype of every slot.
n : int, optional
    The slot count.
values : iterable, optional
    The initial values, converted as ``write`` converts them.
mutable : bool, optional
    False makes the carrier refuse public writes (``is_mutable()`` False).

Raises
------
TypeError
    When ``dtype`` names no strideweave dtype, or a value is of the
    wrong kind for the dtype.
ValueError
    When ``n`` is negative, ``n`` and ``values`` disagree in length, or an
    integer value is out of range.
MemoryError
    When storage for ``n`` slots cannot be allocated.
)doc");
  bind_builtin<CPU>(m, "CPU", R"doc(
Slots in one 64-byte-aligned host buffer; DLPack device (1, 0).

Slot ``i`` of a scalar dtype occupies bytes ``[i * itemsize, (i + 1) *
itemsize)`` in native encoding; a compound slot holds its fields packed in
field order. CPU accepts Bool, Int32, Float32 and compound dtypes.
)doc",
                    R"doc(A CPU carrier of ``dtype``.

With ``n``, the carrier holds ``n`` slots of the dtype's zero; with ``values``,
one slot per value holding it; with neither, it is empty (zero slots) and can
be given slots once with ``allocate``.

Parameters
----------
dtype : DType or numpy.dtype or torch.dtype or str
    The dtype of every slot.
n : int, optional
    The slot count.
values : iterable, optional
    The initial values, converted as ``write`` converts them.
mutable : bool, optional
    False makes the carrier refuse public writes (``is_mutable()`` False).

Raises
------
TypeError
    When ``dtype`` names no strideweave dtype or is an abstract dtype (Floating, Any), or a value is of the
    wrong kind for the dtype.
ValueError
    When ``n`` is negative, ``n`` and ``values`` disagree in length, or an
    integer value is out of range, or the bytes of ``n`` slots exceed ``2**63 - 1``.
MemoryError
    When storage for ``n`` slots cannot be allocated.
)doc")
      .def(
          "pointer", [](const CPU& c) { return reinterpret_cast<uintptr_t>(c.data()); },
          R"doc(The address of the host buffer, as an integer.

Writes through the address bypass the entry points and are invisible to
``version`` and version tokens.

Returns
-------
int
    The buffer's address.

Raises
------
RuntimeError
    When the carrier is released.
)doc");
  CarrierPyClass<FileBacked> file_backed = bind_carrier_class<FileBacked>(m, "FileBacked", R"doc(
Slots in a file, native encoding, no header.

Slot ``i`` is at byte ``i * itemsize``, so ``numpy.fromfile(path, dtype)`` and
``numpy.memmap`` read what StrideWeave wrote. ``path=None`` makes a temporary
file (in ``$TMPDIR``, else /tmp) removed at release, when the carrier is
destroyed and at normal exit; a given path is never removed. FileBacked accepts
Bool, Int32, Float32 and compound dtypes; it has no pointer and does not export
through DLPack. Failed system calls raise the OSError subclass of their errno,
with ``filename`` set to the path.
)doc");
  // bind_builtin's signature, with the path converted by file_path_arg.
  def_carrier_init<FileBacked, DTypeArg, SlotCountArg, PathArg, ValuesArg, bool>(
      file_backed,
      [](DTypeArg dtype, SlotCountArg n, PathArg path, ValuesArg values, bool mutable_) {
        return std::make_tuple(require_dtype(dtype, "FileBacked"), slot_count(n, "FileBacked"),
                               file_path_arg(path, "FileBacked"), optional_values(values),
                               mutable_);
      },
      kAlwaysReleasesGil, py::arg("dtype"), py::arg("n") = py::none(), py::arg("path") = py::none(),
      py::kw_only(), py::arg("values") = py::none(), py::arg("mutable") = true,
      R"doc(A FileBacked carrier of ``dtype`` over the file at ``path``.

With ``values``, the file is created or truncated and holds the values. With
``n`` and no values, the file is created when missing and cut or extended to
exactly ``n`` slots (slots it held keep their bytes, new slots read zero). With
neither, the file must exist and its size gives the slot count. With
``mutable=False`` and no values the file is opened read-only and never resized.
Opening runs without the GIL.

Parameters
----------
dtype : DType or numpy.dtype or torch.dtype or str
    The dtype of every slot.
n : int, optional
    The slot count.
path : str or bytes or os.PathLike, optional
    The file holding the slots; None makes a temporary file.
values : iterable, optional
    The initial values, converted as ``write`` converts them.
mutable : bool, optional
    False makes the carrier refuse public writes.

Raises
------
TypeError
    When ``dtype`` names no strideweave dtype or is abstract (Floating, Any),
    ``path`` is neither a str, bytes nor an os.PathLike, or a value is of the
    wrong kind.
ValueError
    When ``n`` is negative, disagrees with ``values`` or (read-only) with the
    file's slot count, ``path`` holds a NUL byte, the file's size is not a whole
    number of items, or an integer value is out of range.
OSError
    When opening, sizing or writing the file fails (FileNotFoundError,
    PermissionError, ...).
)doc");
  file_backed.def_property_readonly(
      "path", getter<&FileBacked::path>(),
      "pathlib.Path: the file holding the slots (the temporary file's path for "
      "``path=None``), also after release.");
  bind_builtin<Metal>(m, "Metal", R"doc(
Slots in a device buffer of the Metal device queue (the emulated device here).

Host code cannot address the buffer: Metal has no pointer and does not export
through DLPack. Reads return the slots as every command submitted before left
them; writes and ``allocate`` complete on the device before they return;
``release()`` waits for the device work pending on the buffer. Where no Apple
GPU exists the queue is an emulated device running command buffers in
submission order on its own thread. Metal accepts Float32, Int32 and Bool.
)doc",
                      R"doc(A Metal carrier of ``dtype``.

With ``n``, the carrier holds ``n`` slots of the dtype's zero; with ``values``,
one slot per value holding it; with neither, it is empty (zero slots) and can
be given slots once with ``allocate``.

Parameters
----------
dtype : DType or numpy.dtype or torch.dtype or str
    The dtype of every slot.
n : int, optional
    The slot count.
values : iterable, optional
    The initial values, converted as ``write`` converts them.
mutable : bool, optional
    False makes the carrier refuse public writes (``is_mutable()`` False).

Raises
------
TypeError
    When ``dtype`` names no strideweave dtype or is not Float32, Int32 or Bool, or a value is of the
    wrong kind for the dtype.
ValueError
    When ``n`` is negative, ``n`` and ``values`` disagree in length, or an
    integer value is out of range.
MemoryError
    When storage for ``n`` slots cannot be allocated.
)doc");
  CarrierPyClass<BlockDeviceCarrier> block_device =
      bind_carrier_class<BlockDeviceCarrier>(m, "BlockDeviceCarrier", R"doc(
Slots on a file or block device, read and written in whole aligned blocks.

Slot ``i`` is at byte ``i * itemsize``, followed by padding up to a whole number
of blocks. The storage is opened with O_DIRECT, or for buffered I/O where the
file system refuses O_DIRECT (``direct_io`` says which); every I/O covers whole
blocks of ``block_size`` bytes from memory aligned to ``alignment``. A move into
a BlockDeviceCarrier commits only after its data is durable (fdatasync).
``path=None`` makes a temporary file removed at release, when the carrier is
destroyed and at normal exit. It accepts Bool, Int32, Float32 and compound
dtypes; it has no pointer and does not export through DLPack.
)doc");
  // bind_builtin's signature with block_size after path, converted like n.
  def_carrier_init<BlockDeviceCarrier, DTypeArg, SlotCountArg, PathArg, Hint<"int | None">,
                   ValuesArg, bool>(
      block_device,
      [](DTypeArg dtype, SlotCountArg n, PathArg path, Hint<"int | None"> block_size,
         ValuesArg values, bool mutable_) {
        return std::make_tuple(require_dtype(dtype, "BlockDeviceCarrier"),
                               slot_count(n, "BlockDeviceCarrier"),
                               file_path_arg(path, "BlockDeviceCarrier"),
                               block_size_arg(block_size), optional_values(values), mutable_);
      },
      kAlwaysReleasesGil, py::arg("dtype"), py::arg("n") = py::none(), py::arg("path") = py::none(),
      py::arg("block_size") = py::none(), py::kw_only(), py::arg("values") = py::none(),
      py::arg("mutable") = true,
      R"doc(A BlockDeviceCarrier of ``dtype`` over the file or device at ``path``.

The file at a given path is created when missing and sized to the whole blocks
holding the slots (``n``, one per value, or zero); slots it held keep their
bytes, new slots read zero. With ``mutable=False`` and no values it is opened
read-only and never resized. Opening runs without the GIL.

Parameters
----------
dtype : DType or numpy.dtype or torch.dtype or str
    The dtype of every slot.
n : int, optional
    The slot count.
path : str or bytes or os.PathLike, optional
    The file or block device holding the slots; None makes a temporary file.
block_size : int, optional
    The I/O block size in bytes: a power of two from 1 to ``2**23`` (with
    direct I/O, a multiple of the file system's offset alignment). Defaults to
    the larger of 4096 and that alignment.
values : iterable, optional
    The initial values, converted as ``write`` converts them.
mutable : bool, optional
    False makes the carrier refuse public writes.

Raises
------
TypeError
    When ``dtype`` names no strideweave dtype or is abstract (Floating, Any),
    ``path`` is neither a str, bytes nor an os.PathLike, or a value is of the
    wrong kind.
ValueError
    When ``n`` is negative or disagrees with ``values``, ``block_size`` is not
    acceptable, ``path`` holds a NUL byte, a read-only file holds fewer than
    ``n`` slots, or an integer value is out of range.
OSError
    When opening, sizing or writing the storage fails.
)doc");
  block_device
      .def_property_readonly("path", getter<&BlockDeviceCarrier::path>(),
                             "pathlib.Path: the file or device holding the slots, also after "
                             "release.")
      .def_property_readonly("direct_io", getter<&BlockDeviceCarrier::direct_io>(),
                             "bool: whether the storage is opened with O_DIRECT (False: "
                             "buffered I/O, the file system refused O_DIRECT).")
      .def_property_readonly("block_size", getter<&BlockDeviceCarrier::io_block_size>(),
                             "int: the bytes of one I/O block; every read and write covers "
                             "whole blocks at offsets that are multiples of it.")
      .def_property_readonly("alignment", getter<&BlockDeviceCarrier::io_alignment>(),
                             "int: the host-memory alignment of direct I/O (the file system's, "
                             "4096 when it reports none); 1 with buffered I/O.");

  bind_python_storage(m);
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
