// Python binding of core-layout: strideweave.Layout and the layout algebra.
#include "layout.h"

#include <string>

#include "describe.h"
#include "int_convert.h"
#include "int_tuple_convert.h"
#include "self_arg.h"
#include "strideweave/layout/algebra.h"
#include "strideweave/layout/layout.h"
#include "strideweave/util/error.h"
#include "type_hint.h"
#include "value_semantics.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

Tiler to_tiler(py::handle obj, const char* what) {
  if (!PyTuple_Check(obj.ptr()) && !PyList_Check(obj.ptr())) {
    throw TypeError(std::string(what) + " must be a Layout or a tuple of Layouts, not " +
                    py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>());
  }
  Tiler tiler;
  for (py::handle e : obj) {
    if (!py::isinstance<Layout>(e)) {
      throw TypeError(std::string(what) + " tiler element " + object_repr(e) + " is not a Layout");
    }
    tiler.push_back(e.cast<Layout>());
  }
  return tiler;
}

// Binds name(a, b) where b is a Layout or a tuple of Layouts (a mode-by-mode
// tiler), calling the core overload for each.
template <Layout (*WithLayout)(const Layout&, const Layout&),
          Layout (*WithTiler)(const Layout&, const Tiler&)>
void def_tiler_operation(py::module_& m, const char* name, const char* doc) {
  const std::string what = std::string(name) + " operand B";
  m.def(
      name,
      [what](const Layout& a, Hint<"Layout | tuple[Layout, ...]"> b) {
        if (py::isinstance<Layout>(b)) return WithLayout(a, b.cast<const Layout&>());
        return WithTiler(a, to_tiler(b, what.c_str()));
      },
      py::arg("a"), py::arg("b"), doc);
}

using IntTupleArg = Hint<"int | tuple">;

// The Parameters and Raises sections shared by the divisions.
#define SW_DIVIDE_SECTIONS                                                            \
  "\n\nParameters\n----------\na : Layout\n    The layout divided.\n"                 \
  "b : Layout or tuple of Layout\n    The tile: a Layout, or one Layout per leading " \
  "mode of ``a``.\n\nReturns\n-------\nLayout\n    The division.\n\n"                 \
  "Raises\n------\nTypeError\n    When ``b`` is neither a Layout nor a tuple of "     \
  "Layouts.\nValueError\n    When the complement or composition it performs refuses " \
  "the operands (naming the condition and the mode).\n"

}  // namespace

void bind_layout(py::module_& m) {
  py::class_<Layout> layout(
      m, "Layout", R"doc(A hierarchical function from logical coordinates to scalar storage indices.

A Layout pairs a Shape and a Stride, integers or nested tuples of
non-negative integers with the same tree structure (CuTe's layouts). The
index of a coordinate is the sum over leaf modes of the leaf coordinate times
the leaf stride; an integer standing for a tuple mode is decomposed
colexicographically, the first leaf fastest. Layouts are immutable, compare
and hash by value, pickle, and print in CuTe notation, e.g.
``(2,(3,4)):(1,(2,6))``.

Parameters
----------
shape : int or tuple
    The Shape, nested at most 64 levels.
stride : int or tuple, optional
    The Stride, congruent with ``shape``; the compact column-major stride of
    ``shape`` when None.

Raises
------
TypeError
    When a leaf is not an integer (or is a bool).
ValueError
    When an extent or stride is negative, the trees are not congruent, the
    nesting is deeper than 64 levels, or a value, the size or the cosize does
    not fit a signed 64-bit integer.
)doc");
  def_value_semantics(layout);
  layout
      .def(py::init([](IntTupleArg shape, Hint<"int | tuple | None"> stride) {
             IntTuple s = to_int_tuple(shape, "Layout shape");
             if (stride.is_none()) return Layout(s);
             return Layout(s, to_int_tuple(stride, "Layout stride"));
           }),
           py::arg("shape"), py::arg("stride") = py::none())
      .def_property_readonly(
          "shape", [](const Layout& l) -> IntTupleArg { return from_int_tuple(l.shape()); },
          "int or tuple: the Shape, as given (lists read as tuples).")
      .def_property_readonly(
          "stride", [](const Layout& l) -> IntTupleArg { return from_int_tuple(l.stride()); },
          "int or tuple: the Stride, congruent with the Shape.")
      .def_property_readonly("size", getter<&Layout::size>(),
                             "int: the number of coordinates, the product of the leaf extents "
                             "(1 for the empty shape ``()``).")
      .def_property_readonly("cosize", getter<&Layout::cosize>(),
                             "int: one plus the greatest index any coordinate reaches (0 for a "
                             "layout of size 0): the slots the layout spans.")
      .def_property_readonly("rank", getter<&Layout::rank>(),
                             "int: the number of top-level modes (1 for an integral Shape).")
      .def_property_readonly("depth", getter<&Layout::depth>(),
                             "int: the nesting depth of the Shape (0 for an integral Shape).")
      .def_property_readonly(
          "leaf_modes",
          [](const Layout& l) {
            py::list out;
            for (const LeafMode& mode : l.leaf_modes()) {
              out.append(py::make_tuple(mode.extent, mode.stride));
            }
            return out;
          },
          "list of tuple of int: the (extent, stride) pairs of the leaves, in "
          "depth-first order.")
      .def(
          "__call__",
          [](const Layout& l, IntTupleArg coord) { return l(to_int_tuple(coord, "coordinate")); },
          py::arg("coord"), R"doc(``layout(coord)``: the index of a coordinate.

``coord`` is a flat index, a flat coordinate (one integer per leaf mode), or a
hierarchical coordinate whose positions hold integers or tuples congruent
with the Shape; an integer standing for a tuple mode is decomposed
colexicographically, as CuTe does.

Parameters
----------
coord : int or tuple
    The coordinate.

Returns
-------
int
    The index.

Raises
------
TypeError
    When a component is not an integer (or is a bool).
ValueError
    When the coordinate's structure matches neither form.
IndexError
    When a component is negative or not below its extent.
)doc")
      .def(
          "idx2crd",
          [](const Layout& l, Index index) -> IntTupleArg {
            return from_int_tuple(l.idx2crd(index));
          },
          py::arg("index"),
          R"doc(The hierarchical coordinate of a flat index: the inverse of the colexicographic
decomposition that ``layout(index)`` performs.

Parameters
----------
index : int
    A flat index below the layout's size.

Returns
-------
int or tuple
    The coordinate, congruent with the Shape.

Raises
------
TypeError
    When ``index`` is not an integer.
IndexError
    When ``index`` is negative or not below the size.
)doc")
      .def(
          "mode",
          [](const Layout& l, Hint<"int"> i) {
            // Python's sequence indexing: a negative index counts from the end.
            if (PyBool_Check(i.ptr())) {
              throw TypeError("Layout mode index " + describe_object(i) + " is a bool");
            }
            const ClampedInt index = to_clamped_int(i, "Layout mode index");
            const auto rank = static_cast<int64_t>(l.rank());
            const int64_t position = index.value < 0 ? index.value + rank : index.value;
            if (index.overflow != 0 || position < 0 || position >= rank) {
              throw IndexError("Layout mode index " + object_repr(i) +
                               " is out of range for rank " + std::to_string(rank));
            }
            return l.mode(static_cast<std::size_t>(position));
          },
          py::arg("i"),
          R"doc(The i-th top-level mode as a Layout; an integral Layout is its own only mode.

Parameters
----------
i : int
    The mode; a negative ``i`` counts from the end.

Returns
-------
Layout
    The Shape and Stride at that position.

Raises
------
TypeError
    When ``i`` is not an integer (or is a bool).
IndexError
    When ``i`` is outside ``[-rank, rank)``.
)doc")
      .def("is_injective", &Layout::is_injective, self_not_none,
           R"doc(Whether distinct coordinates always reach distinct indices (decided exactly).

Returns
-------
bool
    True when the layout is injective; a layout of size 0 or 1 is.
)doc")
      .def("__repr__", &Layout::to_string, self_not_none)
      .def(py::pickle(
          [](const Layout& l) {
            return py::make_tuple(from_int_tuple(l.shape()), from_int_tuple(l.stride()));
          },
          [](const py::tuple& state) {
            return Layout(to_int_tuple(state[0], "Layout shape"),
                          to_int_tuple(state[1], "Layout stride"));
          }));

  m.def(
      "compact_col_major",
      [](IntTupleArg shape) { return compact_col_major(to_int_tuple(shape, "shape")); },
      py::arg("shape"),
      R"doc(The canonical injective Layout of ``shape``: CuTe's compact column-major.

Each leaf stride is the product of the extents of the leaves before it in
depth-first order, so the cosize equals the size.

Parameters
----------
shape : int or tuple
    The Shape.

Returns
-------
Layout
    The compact column-major Layout.

Raises
------
TypeError
    When a leaf is not an integer.
ValueError
    When an extent is negative or the size does not fit 64 bits.
)doc");
  m.def(
      "idx2crd",
      [](Index index, IntTupleArg shape) -> IntTupleArg {
        return from_int_tuple(idx2crd(index, to_int_tuple(shape, "shape")));
      },
      py::arg("index"), py::arg("shape"),
      R"doc(The coordinate of a flat index in ``shape``, decomposed colexicographically.

Parameters
----------
index : int
    A flat index below the shape's size.
shape : int or tuple
    The Shape.

Returns
-------
int or tuple
    The coordinate, congruent with ``shape``.

Raises
------
TypeError
    When ``index`` or a leaf of ``shape`` is not an integer.
IndexError
    When ``index`` is negative or not below the size.
)doc");
  m.def("coalesce", &coalesce, py::arg("layout"),
        R"doc(The Layout of the same function with adjacent leaf modes merged.

Leaf modes of extent 1 are dropped and adjacent modes ``s0:d0``, ``s1:d1``
with ``d1 == s0 * d0`` merge into ``(s0 * s1):d0``; the result has the same
size, depth at most 1, and ``result(i) == layout(i)`` for every flat index.

Parameters
----------
layout : Layout
    The layout to coalesce.

Returns
-------
Layout
    The coalesced layout (``0:0`` for size 0, ``1:0`` for size 1).

Raises
------
TypeError
    When ``layout`` is not a Layout.
)doc");
  def_tiler_operation<composition, composition>(
      m, "composition",
      R"doc(The composition of two layouts, ``result(i) == a(b(i))``, as CuTe composes.

``b`` may be a tuple of Layouts applied mode by mode to ``a``'s modes. The
result's Shape is compatible with ``b``'s. CuTe's stride and shape
divisibility conditions are checked on every mode walked.

Parameters
----------
a : Layout
    The outer layout.
b : Layout or tuple of Layout
    The inner layout, or one Layout per leading mode of ``a``.

Returns
-------
Layout
    The composition.

Raises
------
TypeError
    When ``b`` is neither a Layout nor a tuple of Layouts.
ValueError
    When a divisibility condition fails (naming it and the mode of ``a``).
)doc");
  m.def("complement", &complement, py::arg("layout"), py::arg("cotarget"),
        R"doc(The Layout that fills the gaps of ``layout``'s image up to ``cotarget``.

As CuTe: the modes sorted by stride, each gap filled by a mode, and a final
mode reaching ``cotarget`` rounded up. The result is ordered and shares only
index 0 with ``layout``'s image; modes of stride 0 or extent 1 are ignored.

Parameters
----------
layout : Layout
    The layout complemented.
cotarget : int
    The size of the index space to fill.

Returns
-------
Layout
    The complement.

Raises
------
TypeError
    When an argument has the wrong type.
ValueError
    When the sorted modes overlap or their strides do not divide (naming the
    mode), or ``cotarget`` is negative.
)doc");
  m.def("right_inverse", &right_inverse, py::arg("layout"),
        R"doc(A coalesced Layout ``r`` with ``layout(r(i)) == i`` for every ``i`` below its size.

It covers the longest chain of ``layout``'s modes, in stride order, whose
strides are 1, s0, s0 * s1 and so on.

Parameters
----------
layout : Layout
    The layout inverted.

Returns
-------
Layout
    The right inverse (``1:0`` when no mode has stride 1, ``0:0`` for size 0).

Raises
------
TypeError
    When ``layout`` is not a Layout.
)doc");
  def_tiler_operation<logical_divide, logical_divide>(
      m, "logical_divide",
      "``a`` divided into tiles of ``b``: ``composition(a, (b, complement(b, a.size)))``, mode "
      "by mode for a tuple ``b``." SW_DIVIDE_SECTIONS);
  def_tiler_operation<zipped_divide, zipped_divide>(
      m, "zipped_divide",
      "The mode-by-mode division of ``a`` by ``b`` regrouped as ``((tiles...), "
      "(rests...))``." SW_DIVIDE_SECTIONS);
  def_tiler_operation<tiled_divide, tiled_divide>(
      m, "tiled_divide",
      "The mode-by-mode division of ``a`` by ``b`` regrouped as ``((tiles...), "
      "rests...)``." SW_DIVIDE_SECTIONS);
  m.def("logical_product", &logical_product, py::arg("a"), py::arg("b"),
        R"doc(``a`` repeated over ``b``: ``(a, composition(complement(a, a.size * b.cosize), b))``.

Parameters
----------
a : Layout
    The tile.
b : Layout
    The layout of the repetitions.

Returns
-------
Layout
    The product.

Raises
------
TypeError
    When an argument is not a Layout.
ValueError
    When the complement or composition it performs refuses the operands.
)doc");
}

}  // namespace strideweave::bindings
