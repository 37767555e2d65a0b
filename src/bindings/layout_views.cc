// Python binding of the layout views. Arguments are converted here; the views
// and their checks are in the core (strideweave/ops/layout_views.h).
#include "layout_views.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "int_convert.h"
#include "int_tuple_convert.h"
#include "strideweave/ops/layout_views.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"
#include "type_hint.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// A mode argument: an integer (not a bool); one beyond int64 is clamped, so
// the core reports it out of range for every rank.
int64_t to_mode(py::handle obj, const char* what) {
  if (PyBool_Check(obj.ptr())) return to_int64(obj, what);  // raises TypeError
  return to_clamped_int(obj, what).value;
}

// permute's modes: the arguments, or the items of a single tuple or list.
std::vector<int64_t> to_modes(const py::args& args) {
  py::tuple items = args;
  if (args.size() == 1 && (PyTuple_Check(args[0].ptr()) || PyList_Check(args[0].ptr()))) {
    items = stored_items(args[0]);
  }
  std::vector<int64_t> modes;
  for (py::handle m : items) modes.push_back(to_mode(m, "permute mode"));
  return modes;
}

// reshape's shape: a single argument (an int or a nested tuple or list), or
// the arguments as the elements of a tuple shape.
IntTuple to_shape(const py::args& args) {
  if (args.empty())
    throw TypeError("reshape() needs a shape, e.g. t.reshape(2, 3) or t.reshape((2, 3))");
  const py::object shape = args.size() == 1 ? py::object(args[0]) : py::object(args);
  return to_int_tuple(shape, "reshape shape");
}

}  // namespace

void bind_layout_views(py::module_& m) {
  auto tensor = py::reinterpret_borrow<py::class_<Tensor, py::smart_holder>>(m.attr("Tensor"));
  tensor
      .def_property_readonly(
          "T", [](const Tensor& t) { return ops::reverse_modes(t.shared_from_this()); },
          R"doc(Tensor: the view with the top-level modes in reverse order, as NumPy's ``.T``.

A rank-0 or rank-1 tensor (an integral shape included) gives a view with the
same layout. Same carrier and offset; recorded by autograd (node "permute").
Reading it raises NotImplementedError for a multi-subtensor tensor.)doc")
      .def(
          "transpose",
          [](const Tensor& t, Hint<"int"> i, Hint<"int"> j) {
            return ops::transpose(t.shared_from_this(), to_mode(i, "transpose mode"),
                                  to_mode(j, "transpose mode"));
          },
          py::arg("i"), py::arg("j"),
          R"doc(The view with top-level modes ``i`` and ``j`` swapped.

Same carrier and offset; recorded by autograd (node "transpose").

Parameters
----------
i : int
    A top-level mode; negative modes count from the end.
j : int
    The other mode.

Returns
-------
Tensor
    The view.

Raises
------
TypeError
    When a mode is not an integer.
IndexError
    When a mode is out of range (naming it).
NotImplementedError
    For a multi-subtensor tensor.)doc")
      .def(
          "permute",
          [](const Tensor& t, const py::args& modes) {
            return ops::permute(t.shared_from_this(), to_modes(modes));
          },
          R"doc(The view whose mode k is mode ``modes[k]`` of this tensor.

Hierarchical modes move as units. Same carrier and offset; recorded by
autograd (node "permute").

Parameters
----------
*modes : int or sequence of int
    Each top-level mode once, as arguments or as one tuple or list; negative
    modes count from the end.

Returns
-------
Tensor
    The view.

Raises
------
TypeError
    When a mode is not an integer.
ValueError
    When the modes are not each mode once (a wrong count or a repeated mode).
IndexError
    When a mode is out of range (naming it).
NotImplementedError
    For a multi-subtensor tensor.)doc")
      .def(
          "reshape",
          [](const Tensor& t, const py::args& shape) {
            return ops::reshape(t.shared_from_this(), to_shape(shape));
          },
          R"doc(The view of the given shape with the same values in flat order.

The element of flat index i is this tensor's element of flat index i, flat
order being colexicographic (first mode fastest, as ``Layout(i)`` and NumPy's
``order="F"``): the layout is ``composition(t.layout, compact_col_major(shape))``.
Same carrier and offset; recorded by autograd (node "reshape").

Parameters
----------
*shape : int or tuple
    The shape: one int or possibly nested tuple, or the extents as
    arguments; one extent may be -1, inferred.

Returns
-------
Tensor
    The view.

Raises
------
TypeError
    When no shape is given or an extent is not an integer.
ValueError
    When the sizes differ (naming both), or no view of that shape exists
    (naming relayout and a copy).
NotImplementedError
    For a multi-subtensor tensor.)doc");
}

}  // namespace strideweave::bindings
