// Python binding of spec/core-tensor-representation: Tensor, views, tolist
// and the friendly factories. DLPack methods are bound in dlpack.cc, the
// arithmetic operators in ops.cc and the autograd members in autograd.cc.
#include "tensor.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "buffer_convert.h"
#include "describe.h"
#include "dtype_convert.h"
#include "gil.h"
#include "int_convert.h"
#include "int_tuple_convert.h"
#include "self_arg.h"
#include "strideweave/carrier/carrier.h"
#include "strideweave/ops/math.h"
#include "strideweave/tensor/factories.h"
#include "strideweave/tensor/format.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/checked_math.h"
#include "strideweave/util/error.h"
#include "type_hint.h"
#include "value_convert.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// Nests `values` (flat colexicographic leaf order) one list level per leaf
// mode, the first leaf mode outermost. Built innermost level first, without
// recursion: a layout may have any number of leaf modes.
py::object nest(const std::vector<Value>& values, const std::vector<int64_t>& extents) {
  std::vector<py::object> level;
  level.reserve(values.size());
  for (const Value& v : values) level.push_back(from_value(v));
  // outer[k]: the positions of the modes before mode k (the products do not
  // overflow: the layout's size was computed by the same running product).
  std::vector<int64_t> outer(extents.size(), 1);
  for (std::size_t k = 1; k < extents.size(); ++k) outer[k] = outer[k - 1] * extents[k - 1];
  for (std::size_t k = extents.size(); k-- > 0;) {
    const int64_t extent = extents[k];
    std::vector<py::object> lists;
    lists.reserve(static_cast<std::size_t>(outer[k]));
    for (int64_t p = 0; p < outer[k]; ++p) {
      py::list inner(static_cast<std::size_t>(extent));
      for (int64_t j = 0; j < extent; ++j) {
        inner[static_cast<std::size_t>(j)] = level[static_cast<std::size_t>(p + outer[k] * j)];
      }
      lists.push_back(std::move(inner));
    }
    level = std::move(lists);
  }
  return level.front();
}

py::object tolist(const Tensor& t) {
  const IntTuple& shape = t.shape();
  if (!t.is_multi_subtensor() && t.dtype().is_scalar() && t.dtype().itemsize()) {
    const Layout nested_order = compact_row_major(shape);
    std::vector<std::byte> items(static_cast<std::size_t>(nested_order.size()) *
                                 *t.dtype().itemsize());
    without_gil([&] { t.read_into(items, nested_order); });
    return nest_items(t.dtype(), items.data(),
                      shape.is_leaf() ? std::vector<int64_t>{shape.value()} : shape.leaves());
  }
  const std::vector<Value> values = without_gil([&] { return t.values(); });
  if (shape.is_leaf()) {
    py::list out;
    for (const Value& v : values) out.append(from_value(v));
    return out;
  }
  return nest(values, shape.leaves());
}

// Reads nested sequences (first mode outermost) into a shape and values.
void read_nested(py::handle obj, std::size_t depth, std::vector<int64_t>& extents,
                 std::vector<Value>& values) {
  const bool is_sequence = (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr()));
  if (depth == extents.size()) {
    if (is_sequence) throw ValueError("ragged nesting: a sequence where a value was expected");
    values.push_back(to_value(obj));
    return;
  }
  if (!is_sequence) throw ValueError("ragged nesting: a value where a sequence was expected");
  // A copy: converting an item (its __index__) may mutate a list being read.
  const py::tuple items = stored_items(obj);
  const auto n = static_cast<int64_t>(items.size());
  if (n != extents[depth]) {
    throw ValueError("ragged nesting: length " + std::to_string(n) + " at depth " +
                     std::to_string(depth) + " differs from " + std::to_string(extents[depth]));
  }
  for (py::handle e : items) read_nested(e, depth + 1, extents, values);
}

std::shared_ptr<Tensor> tensor_factory(
    Hint<"collections.abc.Sequence | Tensor | numpy.ndarray | torch.Tensor"> given,
    Hint<"DType | numpy.dtype | torch.dtype | str | None"> dtype) {
  py::object values = given;
  const std::optional<DType> requested = to_optional_dtype(dtype, "tensor: dtype");
  if (py::isinstance<Tensor>(values)) {
    // The copy tolist() would make, without the lists: one strided copy. An
    // empty tensor of a scalar dtype keeps the list path, whose nesting and
    // inference decide its shape and dtype.
    const auto& source = values.cast<const Tensor&>();
    const bool same_dtype = !requested || *requested == source.dtype();
    if (!source.is_multi_subtensor() && source.dtype().is_concrete() &&
        shape_size(source.shape()) > 0 && same_dtype) {
      return without_gil([&] { return tensor_from_tensor(source); });
    }
    // A record is one element, not a level of nesting: a tensor of compound
    // dtype (planar or not) keeps its dtype and shape, and converts to no
    // other dtype (its tolist() would read as nested numbers).
    if (source.dtype().is_compound() || source.is_multi_subtensor()) {
      if (!same_dtype) {
        throw TypeError("tensor: a Tensor of the compound dtype " + source.dtype().name() +
                        " copies only as that dtype, not as " + requested->name());
      }
      return without_gil([&] { return tensor_from_tensor(source); });
    }
  }
  if (!requested) warn_if_narrowed(values, "tensor");
  if (py::hasattr(values, "tolist") && !PyList_Check(values.ptr()))
    values = values.attr("tolist")();
  // The shape comes from the first element at each depth; read_nested then
  // checks every element against it. Each level is read as read_nested reads
  // it, by its stored items: a list subclass's __len__ and __getitem__ are
  // never asked, so they cannot give a shape its items contradict.
  std::vector<int64_t> extents;
  for (py::object probe = values; PyList_Check(probe.ptr()) || PyTuple_Check(probe.ptr());) {
    if (extents.size() == kMaxValueNesting) {
      throw ValueError("tensor values nest deeper than the limit of " +
                       std::to_string(kMaxValueNesting) + " levels");
    }
    const py::tuple items = stored_items(probe);
    extents.push_back(static_cast<int64_t>(items.size()));
    if (extents.back() == 0) break;
    probe = items[0];
  }
  std::vector<Value> flat;
  read_nested(values, 0, extents, flat);
  std::vector<IntTuple> modes(extents.begin(), extents.end());
  const IntTuple shape = extents.size() == 1 ? IntTuple(extents[0]) : IntTuple::tuple(modes);
  return without_gil([&] { return tensor_from_values(shape, flat, requested); });
}

// Writes Tensor::read_encoded's bytes into `buffer`, any writable contiguous
// buffer of exactly that size (NumPy allocates it: np.empty(..., order="F")).
// The copy runs without the GIL; the buffer export keeps the memory in place.
void read_encoded_into(const Tensor& t, py::handle buffer) {
  const std::optional<std::size_t> itemsize = t.dtype().itemsize();
  if (!itemsize) {
    throw TypeError("the abstract dtype " + t.dtype().name() + " has no encoding");
  }
  const int64_t bytes = checked_mul(shape_size(t.shape()), static_cast<int64_t>(*itemsize),
                                    "the tensor's encoded size");
  Py_buffer view;
  if (PyObject_GetBuffer(buffer.ptr(), &view, PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS) != 0) {
    throw py::error_already_set();
  }
  const std::unique_ptr<Py_buffer, void (*)(Py_buffer*)> held(&view, &PyBuffer_Release);
  if (static_cast<int64_t>(view.len) != bytes) {
    throw ValueError("_read_encoded_into: the buffer holds " + std::to_string(view.len) +
                     " bytes; the tensor's encoded values need " + std::to_string(bytes));
  }
  without_gil([&] { t.read_encoded(static_cast<std::byte*>(view.buf)); });
}

// np.array(t, copy=True)'s copy in one call (tensors.py, _copied): a new
// writable Fortran-ordered ndarray of the leaf shape holding the values in
// flat order, natively encoded (Tensor::read_encoded, without the GIL), for a
// Tensor of one subtensor whose dtype NumPy holds as a scalar (Bool, Int32,
// Float32); None for any other, which the caller copies through
// _read_encoded_into. NumPy is imported by the first call (pybind11's numpy
// support), which NumPy's own __array__ protocol makes.
py::object copy_to_numpy(const Tensor& t) {
  if (t.is_multi_subtensor()) return py::none();
  py::dtype dtype;
  switch (t.dtype().kind()) {
    case DTypeKind::kBool:
      dtype = py::dtype::of<bool>();
      break;
    case DTypeKind::kInt32:
      dtype = py::dtype::of<int32_t>();
      break;
    case DTypeKind::kFloat32:
      dtype = py::dtype::of<float>();
      break;
    default:
      return py::none();
  }
  const std::vector<LeafMode>& modes = t.subtensor("__array__").layout.leaf_modes();
  std::vector<py::ssize_t> shape;
  std::vector<py::ssize_t> strides;
  shape.reserve(modes.size());
  strides.reserve(modes.size());
  py::ssize_t stride = dtype.itemsize();
  for (const LeafMode& m : modes) {
    shape.push_back(static_cast<py::ssize_t>(m.extent));
    strides.push_back(stride);
    stride *= static_cast<py::ssize_t>(m.extent);
  }
  py::array out(std::move(dtype), std::move(shape), std::move(strides));
  auto* data = static_cast<std::byte*>(out.mutable_data());
  without_gil([&] { t.read_encoded(data); });
  return out;
}

// A slice bound or step: None, or any integer, clamped to int64 (which clamps
// to the mode exactly as a larger integer would).
std::optional<int64_t> slice_part(py::handle v) {
  if (v.is_none()) return std::nullopt;
  if (!PyIndex_Check(v.ptr())) {
    throw TypeError("slice indices must be integers or None, not " + describe_object(v));
  }
  return to_clamped_int(v, "slice index").value;
}

IndexItem to_index_item(py::handle item) {
  if (PySlice_Check(item.ptr())) {
    const auto* slice = reinterpret_cast<PySliceObject*>(item.ptr());
    Slice out;
    out.start = slice_part(slice->start);
    out.stop = slice_part(slice->stop);
    out.step = slice_part(slice->step).value_or(1);
    return out;
  }
  if (PyBool_Check(item.ptr()) || !PyIndex_Check(item.ptr())) {
    throw TypeError("tensor index " + object_repr(item) + " is not an integer or a slice");
  }
  const ClampedInt index = to_clamped_int(item, "tensor index");
  if (index.overflow != 0) {
    throw IndexError("index " + object_repr(item) + " is out of range for every mode");
  }
  return index.value;
}

}  // namespace

namespace {

// The types the factories' and views' checked arguments accept, as signatures show them.
using DTypeArg = Hint<"DType | numpy.dtype | torch.dtype | str | None">;
using ShapeArg = Hint<"int | tuple">;
using Scalar = Hint<"bool | int | float">;

}  // namespace

void bind_tensor(py::module_& m) {
  py::class_<Tensor, py::smart_holder>(
      m, "Tensor",
      R"doc(A typed window of storage: a logical dtype plus one subtensor, or validated planes.

A single-subtensor Tensor is a dtype, a carrier that holds the values, a
Layout that maps logical coordinates to the carrier's slots, and an offset.
Views (indexing, ``relayout``, ``T``, ``transpose``, ``permute``,
``reshape``, ``broadcast_to``) address the same carrier; the factories
(``tensor``, ``zeros``, ``full``, ``arange``) and the operations copy into
fresh CPU storage. A multi-subtensor Tensor (``Tensor.from_planes``) holds a
compound dtype's fields as one plane per field.

Parameters
----------
carrier : Carrier
    The storage the tensor reads and writes; its dtype is the tensor's dtype.
layout : Layout
    Maps the tensor's coordinates to the carrier's slots; its shape is the
    tensor's shape.
offset : int, default 0
    The slot the layout's index 0 refers to.

Raises
------
TypeError
    When ``carrier`` is not a Carrier or ``layout`` is not a Layout.
ValueError
    When ``offset`` is negative, or a layout of non-zero size reaches past the
    carrier's slots (``offset + cosize`` exceeds them).
RuntimeError
    When the carrier is released.
)doc")
      .def(py::init([](Hint<"Carrier"> carrier, Hint<"Layout"> layout, Hint<"int"> offset) {
             if (!py::isinstance<Carrier>(carrier)) {
               throw TypeError("Tensor carrier " + object_repr(carrier) + " is not a Carrier");
             }
             if (!py::isinstance<Layout>(layout)) {
               throw TypeError("Tensor layout " + object_repr(layout) + " is not a Layout");
             }
             return Tensor::make(carrier.cast<std::shared_ptr<Carrier>>(), layout.cast<Layout>(),
                                 to_int64(offset, "Tensor offset"));
           }),
           py::arg("carrier"), py::arg("layout"), py::arg("offset") = 0)
      .def_static(
          "from_planes",
          [](Hint<"DType | numpy.dtype | torch.dtype | str"> dtype,
             Hint<"collections.abc.Iterable[Tensor]"> planes) {
            const DType compound = to_dtype(dtype, "from_planes dtype");
            std::vector<std::shared_ptr<Tensor>> converted;
            for (py::handle p : planes) {
              if (!py::isinstance<Tensor>(p)) {
                throw TypeError("from_planes plane " + object_repr(p) + " is not a Tensor");
              }
              converted.push_back(p.cast<std::shared_ptr<Tensor>>());
            }
            return Tensor::from_planes(compound, std::move(converted));
          },
          py::arg("dtype"), py::arg("planes"),
          R"doc(A multi-subtensor Tensor holding a compound dtype's fields as planes.

Plane k holds field k's values; the planes are validated, not copied: each
must be a single-subtensor Tensor of that field's dtype, all of one shape.

Parameters
----------
dtype : DType or numpy.dtype or torch.dtype or str
    The compound dtype.
planes : iterable of Tensor
    One Tensor per field, in field order.

Returns
-------
Tensor
    The multi-subtensor Tensor; its ``planes`` are the given tensors.

Raises
------
TypeError
    When ``dtype`` names no dtype or is not compound, or a plane is not a
    Tensor.
ValueError
    When the number of planes, a plane's dtype or a plane's shape does not
    match.
)doc")
      .def_property_readonly("dtype", getter<&Tensor::dtype>(),
                             "DType: the logical dtype of the tensor's values.")
      .def_property_readonly(
          "shape", [](const Tensor& t)->Hint<"int | tuple"> { return from_int_tuple(t.shape()); },
          "int or tuple: the shape, its layout's shape (an int for an integral shape, a possibly "
          "nested tuple otherwise).")
      .def_property_readonly(
          "carrier", [](const Tensor& t) { return t.subtensor("carrier").carrier; },
          "Carrier: the storage the tensor addresses. Raises NotImplementedError for a "
          "multi-subtensor tensor (read ``planes``).")
      .def_property_readonly(
          "layout", [](const Tensor& t) { return t.subtensor("layout").layout; },
          "Layout: the map from coordinates to the carrier's slots. Raises NotImplementedError for "
          "a "
          "multi-subtensor tensor.")
      .def_property_readonly(
          "offset", [](const Tensor& t) { return t.subtensor("offset").offset; },
          "int: the slot the layout's index 0 refers to. Raises NotImplementedError for a "
          "multi-subtensor tensor.")
      .def_property_readonly("is_multi_subtensor", getter<&Tensor::is_multi_subtensor>(),
                             "bool: whether the tensor holds planes (``Tensor.from_planes``).")
      .def_property_readonly(
          "planes", [](const Tensor& t) { return t.planes(); },
          "list of Tensor: the planes of a multi-subtensor tensor, one per field; empty for "
          "a single-subtensor tensor.")
      .def(
          "tolist", [](const Tensor& t)->Hint<"list | typing.Any"> { return tolist(t); },
          R"doc(The tensor's values as nested Python lists, read through its layout.

One list level per leaf mode, the first leaf mode outermost: element
``[i0][i1]...`` is the value at leaf coordinate ``(i0, i1, ...)``. An
integral shape gives a flat list and the empty shape ``()`` a single value.
Values are bools, ints and floats for Bool, Int32 and Float32, the stored
objects for the abstract dtypes, and tuples of field values for a compound
dtype. Reading runs without the GIL and changes no version.

Returns
-------
list or Any
    The nested values: a list, or the single value for shape ``()``.

Raises
------
RuntimeError
    When the carrier (or a plane's carrier) is released.
)doc")
      .def("is_mutable", &Tensor::is_mutable, self_not_none,
           R"doc(Whether the tensor's carrier is publicly mutable now.

Returns
-------
bool
    The carrier's public mutability at the moment of the call.
)doc")
      .def(
          "relayout",
          [](const Tensor& t, const Layout& layout, Hint<"int"> offset) {
            return ops::relayout(t.shared_from_this(), layout, to_int64(offset, "relayout offset"));
          },
          py::arg("layout"), py::arg("offset") = 0,
          R"doc(The view of the same carrier under another layout and offset.

The view is validated as the Tensor constructor validates its arguments;
under grad mode it is recorded by autograd.

Parameters
----------
layout : Layout
    The view's layout.
offset : int, default 0
    The view's offset into the carrier.

Returns
-------
Tensor
    The view; it shares the carrier.

Raises
------
TypeError
    When ``layout`` is not a Layout or ``offset`` not an integer.
ValueError
    When ``offset`` is negative or the window reaches past the carrier's
    slots.
NotImplementedError
    For a multi-subtensor tensor.
)doc")
      .def(
          "broadcast_to",
          [](const Tensor& t, ShapeArg shape) {
            return ops::broadcast_to(t.shared_from_this(),
                                     to_int_tuple(shape, "broadcast_to shape"));
          },
          py::arg("shape"),
          R"doc(The view of the tensor broadcast to ``shape``, with stride 0 where it repeats.

The view's leading modes are the tensor's modes, each equal to the target's
mode or of extent 1 (then given the target's extent with stride 0); further
target modes get stride 0. Nothing is copied.

Parameters
----------
shape : int or tuple
    The target shape.

Returns
-------
Tensor
    The broadcast view over the same carrier.

Raises
------
TypeError
    When ``shape`` is not an int or a nested tuple of ints.
ValueError
    When the tensor's shape does not broadcast to ``shape`` (naming both).
NotImplementedError
    For a multi-subtensor tensor.
)doc")
      .def(
          "__getitem__",
          [](const Tensor& t, Hint<"int | slice | tuple[int | slice, ...]"> key) {
            std::vector<IndexItem> items;
            if (PyTuple_Check(key.ptr())) {
              for (py::handle k : key) items.push_back(to_index_item(k));
            } else {
              items.push_back(to_index_item(key));
            }
            return ops::index(t.shared_from_this(), items);
          },
          py::arg("key"),
          R"doc(``t[key]``: the view selecting coordinates of the top-level modes, in order.

An integer fixes its mode's coordinate (colexicographic for a tuple mode) and
drops the mode; negative integers count from the end. A slice restricts an
integral mode (bounds clamped as for Python sequences, positive step); a
tuple mode takes only the full slice ``:``. Missing trailing positions mean
full slices. The view shares the carrier.

Parameters
----------
key : int or slice or tuple of int and slice
    One index per leading top-level mode.

Returns
-------
Tensor
    The view.

Raises
------
TypeError
    When an index is neither an integer nor a slice.
IndexError
    When an integer is out of range, or there are more indices than modes.
ValueError
    For a negative or zero step, or a partial slice of a tuple mode.
)doc")
      .def("__len__", &Tensor::length, self_not_none,
           R"doc(``len(t)``: the extent of the first top-level mode.

Returns
-------
int
    The size of the first top-level mode (the extent of an integral shape).

Raises
------
TypeError
    For a rank-0 tensor (shape ``()``).
)doc")
      .def("__repr__", &format_tensor)
      .def("_read_encoded_into", &read_encoded_into, py::arg("buffer"),
           "Writes the values in flat order, natively encoded, into a contiguous buffer.")
      .def("_copy_to_numpy", &copy_to_numpy,
           "A new Fortran-ordered ndarray of the values for a Bool, Int32 or Float32 tensor "
           "of one subtensor, else None.");

  m.def("tensor", &tensor_factory, py::arg("values"), py::arg("dtype") = py::none(),
        R"doc(A new Tensor copying ``values`` into fresh CPU storage.

Nested sequences give one mode per nesting level, the first level outermost;
an object with a ``tolist()`` method (a NumPy array, a PyTorch tensor) is read
through it; a Tensor is copied (a compound one with its dtype, shape and
records). The result is publicly mutable, at offset 0, under the compact
column-major layout of its shape. Without ``dtype``, all-bool values give
Bool, all-integer Int32 and any float Float32; NumPy or PyTorch float64 or
int64 data then narrows with a UserWarning.

Parameters
----------
values : sequence or Tensor or array-like
    The values, nested at most 64 levels.
dtype : DType or numpy.dtype or torch.dtype or str, optional
    The dtype; inferred from the values when None.

Returns
-------
Tensor
    The new tensor.

Raises
------
TypeError
    When ``dtype`` names no strideweave dtype, a value's type does not fit
    the dtype, or a compound Tensor is asked for another dtype.
ValueError
    For ragged nesting, nesting deeper than 64 levels, or a value the dtype
    cannot represent.
MemoryError
    When the storage cannot be allocated.
)doc");
  m.def(
      "zeros",
      [](ShapeArg shape, DTypeArg dtype) {
        const IntTuple converted = to_int_tuple(shape, "zeros shape");
        const DType element = to_optional_dtype(dtype, "zeros: dtype").value_or(DType::Float32());
        return without_gil([&] { return zeros(converted, element); });
      },
      py::arg("shape"), py::arg("dtype") = py::none(),
      R"doc(A new Tensor of ``shape`` filled with zeros, in fresh CPU storage.

The result is publicly mutable, at offset 0, under the compact column-major
layout of ``shape``.

Parameters
----------
shape : int or tuple
    The shape: an int or a possibly nested tuple of non-negative ints.
dtype : DType or numpy.dtype or torch.dtype or str, optional
    The dtype; Float32 when None.

Returns
-------
Tensor
    The new tensor.

Raises
------
TypeError
    When ``shape`` is not an int or nested tuple of ints, or ``dtype`` names
    no strideweave dtype.
ValueError
    When an extent is negative or the elements need more than 2**63 - 1
    bytes.
MemoryError
    When the storage cannot be allocated.
)doc");
  m.def(
      "full",
      [](ShapeArg shape, Scalar value, DTypeArg dtype) {
        const IntTuple converted = to_int_tuple(shape, "full shape");
        const std::optional<DType> element = to_optional_dtype(dtype, "full: dtype");
        if (!element) warn_if_narrowed(value, "full");
        const Value fill = to_value(value);
        return without_gil([&] { return full(converted, fill, element); });
      },
      py::arg("shape"), py::arg("value"), py::arg("dtype") = py::none(),
      R"doc(A new Tensor of ``shape`` with every element ``value``, in fresh CPU storage.

The result is publicly mutable, at offset 0, under the compact column-major
layout of ``shape``.

Parameters
----------
shape : int or tuple
    The shape: an int or a possibly nested tuple of non-negative ints.
value : bool or int or float
    The fill value.
dtype : DType or numpy.dtype or torch.dtype or str, optional
    The dtype; inferred from ``value`` (Bool, Int32 or Float32) when None.

Returns
-------
Tensor
    The new tensor.

Raises
------
TypeError
    When ``shape`` or ``value`` has the wrong type, or ``dtype`` names no
    strideweave dtype.
ValueError
    When an extent is negative, ``value`` is out of the dtype's range, or the
    elements need more than 2**63 - 1 bytes.
MemoryError
    When the storage cannot be allocated.
)doc");
  m.def(
      "arange",
      [](Hint<"int | float"> start, Hint<"int | float | None"> stop, Hint<"int | float"> step,
         DTypeArg dtype) {
        const std::optional<DType> element = to_optional_dtype(dtype, "arange: dtype");
        // One warning, for the first bound narrowed.
        if (!element && !warn_if_narrowed(start, "arange") && !warn_if_narrowed(stop, "arange")) {
          warn_if_narrowed(step, "arange");
        }
        Value first = to_value(start);
        Value last = first;
        if (stop.is_none()) {
          first = int64_t{0};
        } else {
          last = to_value(stop);
        }
        const Value increment = to_value(step);
        return without_gil([&] { return arange(first, last, increment, element); });
      },
      py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1,
      py::arg("dtype") = py::none(),
      R"doc(A new rank-1 Tensor of ``start, start + step, ...`` up to ``stop`` (excluded).

As NumPy's ``arange``: ``arange(n)`` counts from 0 to ``n - 1``. The result is
in fresh, publicly mutable CPU storage.

Parameters
----------
start : int or float
    The first value, or the stop when ``stop`` is None (the start is then 0).
stop : int or float, optional
    The end, excluded.
step : int or float, default 1
    The increment.
dtype : DType or numpy.dtype or torch.dtype or str, optional
    The dtype; Int32 for integer bounds and Float32 when any is a float when
    None.

Returns
-------
Tensor
    The new tensor.

Raises
------
TypeError
    When a bound is not a number, or ``dtype`` names no strideweave dtype.
ValueError
    When the length cannot be computed (a NaN bound or a zero step) or is
    infinite, or the elements need more than 2**63 - 1 bytes.
MemoryError
    When the storage cannot be allocated.
)doc");
}

}  // namespace strideweave::bindings
