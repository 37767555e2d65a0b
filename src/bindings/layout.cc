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
void def_tiler_operation(py::module_& m, const char* name) {
  const std::string what = std::string(name) + " operand B";
  m.def(
      name,
      [what](const Layout& a, py::handle b) {
        if (py::isinstance<Layout>(b)) return WithLayout(a, b.cast<const Layout&>());
        return WithTiler(a, to_tiler(b, what.c_str()));
      },
      py::arg("a"), py::arg("b"));
}

}  // namespace

void bind_layout(py::module_& m) {
  py::class_<Layout> layout(m, "Layout", R"doc(
A hierarchical function from logical coordinates to scalar storage indices.

Layout(shape, stride=None): shape and stride are integers or nested tuples of
non-negative integers with the same tree structure; stride None takes the
compact column-major stride of shape. Layouts are immutable, compare by value
and print in CuTe notation, e.g. (2,(3,4)):(1,(2,6)).
)doc");
  def_value_semantics(layout);
  layout
      .def(py::init([](py::handle shape, py::handle stride) {
             IntTuple s = to_int_tuple(shape, "Layout shape");
             if (stride.is_none()) return Layout(s);
             return Layout(s, to_int_tuple(stride, "Layout stride"));
           }),
           py::arg("shape"), py::arg("stride") = py::none())
      .def_property_readonly("shape", [](const Layout& l) { return from_int_tuple(l.shape()); })
      .def_property_readonly("stride", [](const Layout& l) { return from_int_tuple(l.stride()); })
      .def_property_readonly("size", getter<&Layout::size>())
      .def_property_readonly("cosize", getter<&Layout::cosize>())
      .def_property_readonly("rank", getter<&Layout::rank>())
      .def_property_readonly("depth", getter<&Layout::depth>())
      .def_property_readonly("leaf_modes",
                             [](const Layout& l) {
                               py::list out;
                               for (const LeafMode& mode : l.leaf_modes()) {
                                 out.append(py::make_tuple(mode.extent, mode.stride));
                               }
                               return out;
                             })
      .def(
          "__call__",
          [](const Layout& l, py::handle coord) { return l(to_int_tuple(coord, "coordinate")); },
          py::arg("coord"))
      .def(
          "idx2crd", [](const Layout& l, Index index) { return from_int_tuple(l.idx2crd(index)); },
          py::arg("index"))
      .def(
          "mode",
          [](const Layout& l, py::handle i) {
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
          py::arg("i"))
      .def("is_injective", &Layout::is_injective, self_not_none)
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
      [](py::handle shape) { return compact_col_major(to_int_tuple(shape, "shape")); },
      py::arg("shape"), "The canonical injective layout of shape: CuTe's compact column-major.");
  m.def(
      "idx2crd",
      [](Index index, py::handle shape) {
        return from_int_tuple(idx2crd(index, to_int_tuple(shape, "shape")));
      },
      py::arg("index"), py::arg("shape"));
  m.def("coalesce", &coalesce, py::arg("layout"));
  def_tiler_operation<composition, composition>(m, "composition");
  m.def("complement", &complement, py::arg("layout"), py::arg("cotarget"));
  m.def("right_inverse", &right_inverse, py::arg("layout"));
  def_tiler_operation<logical_divide, logical_divide>(m, "logical_divide");
  def_tiler_operation<zipped_divide, zipped_divide>(m, "zipped_divide");
  def_tiler_operation<tiled_divide, tiled_divide>(m, "tiled_divide");
  m.def("logical_product", &logical_product, py::arg("a"), py::arg("b"));
}

}  // namespace strideweave::bindings
