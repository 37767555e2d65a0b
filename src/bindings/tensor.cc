// Python binding of spec/core-tensor-representation: Tensor, views, tolist
// and the friendly factories. DLPack methods are bound in dlpack.cc, the
// arithmetic operators in ops.cc and the autograd members in autograd.cc.
#include "tensor.h"

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

std::shared_ptr<Tensor> tensor_factory(py::object values, py::object dtype) {
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

void bind_tensor(py::module_& m) {
  py::class_<Tensor, py::smart_holder>(m, "Tensor", R"doc(
A logical dtype plus one subtensor (carrier, offset, layout), or validated planes.

Tensor(carrier, layout, offset=0) views a window of carrier; see
spec/core-tensor-representation.
)doc")
      .def(py::init([](py::handle carrier, py::handle layout, py::handle offset) {
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
          [](py::handle dtype, py::handle planes) {
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
          py::arg("dtype"), py::arg("planes"))
      .def_property_readonly("dtype", getter<&Tensor::dtype>())
      .def_property_readonly("shape", [](const Tensor& t) { return from_int_tuple(t.shape()); })
      .def_property_readonly("carrier",
                             [](const Tensor& t) { return t.subtensor("carrier").carrier; })
      .def_property_readonly("layout", [](const Tensor& t) { return t.subtensor("layout").layout; })
      .def_property_readonly("offset", [](const Tensor& t) { return t.subtensor("offset").offset; })
      .def_property_readonly("is_multi_subtensor", getter<&Tensor::is_multi_subtensor>())
      .def_property_readonly("planes", [](const Tensor& t) { return t.planes(); })
      .def("tolist", &tolist)
      .def("is_mutable", &Tensor::is_mutable, self_not_none)
      .def(
          "relayout",
          [](const Tensor& t, const Layout& layout, py::handle offset) {
            return ops::relayout(t.shared_from_this(), layout, to_int64(offset, "relayout offset"));
          },
          py::arg("layout"), py::arg("offset") = 0)
      .def(
          "broadcast_to",
          [](const Tensor& t, py::handle shape) {
            return ops::broadcast_to(t.shared_from_this(),
                                     to_int_tuple(shape, "broadcast_to shape"));
          },
          py::arg("shape"))
      .def("__getitem__",
           [](const Tensor& t, py::handle key) {
             std::vector<IndexItem> items;
             if (PyTuple_Check(key.ptr())) {
               for (py::handle k : key) items.push_back(to_index_item(k));
             } else {
               items.push_back(to_index_item(key));
             }
             return ops::index(t.shared_from_this(), items);
           })
      .def("__len__", &Tensor::length, self_not_none)
      .def("__repr__", &format_tensor)
      .def("_read_encoded_into", &read_encoded_into, py::arg("buffer"),
           "Writes the values in flat order, natively encoded, into a contiguous buffer.");

  m.def("tensor", &tensor_factory, py::arg("values"), py::arg("dtype") = py::none(),
        "A Tensor copying nested sequences (or anything with tolist()) into a new CPU carrier.");
  m.def(
      "zeros",
      [](py::handle shape, py::object dtype) {
        const IntTuple converted = to_int_tuple(shape, "zeros shape");
        const DType element = to_optional_dtype(dtype, "zeros: dtype").value_or(DType::Float32());
        return without_gil([&] { return zeros(converted, element); });
      },
      py::arg("shape"), py::arg("dtype") = py::none());
  m.def(
      "full",
      [](py::handle shape, py::handle value, py::object dtype) {
        const IntTuple converted = to_int_tuple(shape, "full shape");
        const std::optional<DType> element = to_optional_dtype(dtype, "full: dtype");
        if (!element) warn_if_narrowed(value, "full");
        const Value fill = to_value(value);
        return without_gil([&] { return full(converted, fill, element); });
      },
      py::arg("shape"), py::arg("value"), py::arg("dtype") = py::none());
  m.def(
      "arange",
      [](py::handle start, py::object stop, py::handle step, py::object dtype) {
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
      py::arg("dtype") = py::none());
}

}  // namespace strideweave::bindings
