// Python binding of the logical dtypes (spec/core-tensor-representation).
#include "dtype.h"

#include <string>
#include <vector>

#include "describe.h"
#include "dtype_convert.h"
#include "self_arg.h"
#include "strideweave/dtype/dtype.h"
#include "strideweave/util/error.h"
#include "type_hint.h"
#include "value_semantics.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

Field to_field(py::handle name, py::handle dtype) {
  if (!py::isinstance<py::str>(name)) {
    throw TypeError("compound field name " + object_repr(name) + " is not a string");
  }
  const std::string field = name.cast<std::string>();
  return Field{field, to_dtype(dtype, "compound field '" + field + "': dtype")};
}

DType compound(const py::args& args, const py::kwargs& kwargs) {
  std::vector<Field> fields;
  if (args.size() > 1) throw TypeError("compound takes one sequence of (name, dtype) pairs");
  if (args.size() == 1) {
    for (py::handle pair : args[0]) {
      const py::tuple t = py::tuple(py::reinterpret_borrow<py::object>(pair));
      if (t.size() != 2) throw TypeError("compound fields are (name, dtype) pairs");
      fields.push_back(to_field(t[0], t[1]));
    }
  }
  for (const auto& [name, dtype] : kwargs) fields.push_back(to_field(name, dtype));
  return DType::compound(std::move(fields));
}

}  // namespace

void bind_dtype(py::module_& m) {
  py::class_<DType> dtype(m, "DType", R"doc(A logical dtype: what a tensor's values are.

The concrete scalar dtypes ``Bool``, ``Int32`` and ``Float32`` have an encoding
(item sizes 1, 4 and 4); the abstract dtypes ``Floating`` and ``Any`` are
families with no item size, held by ``Generic`` carriers; ``compound(...)``
builds record dtypes from named concrete scalar fields. DTypes are immutable,
compare and hash by value, and are not constructed directly: use the module's
instances and ``compound``.
)doc");
  def_value_semantics(dtype);
  dtype
      .def_property_readonly("name", getter<&DType::name>(),
                             "str: the dtype's name, e.g. ``\"Float32\"``, as repr shows it.")
      .def_property_readonly("is_concrete", getter<&DType::is_concrete>(),
                             "bool: whether values have an encoding (Bool, Int32, Float32 and "
                             "compound dtypes).")
      .def_property_readonly("is_abstract", getter<&DType::is_abstract>(),
                             "bool: whether the dtype is a family without an encoding (Floating, "
                             "Any).")
      .def_property_readonly("is_compound", getter<&DType::is_compound>(),
                             "bool: whether the dtype is a record of named fields.")
      .def_property_readonly(
          "itemsize", [](const DType& d)->Hint<"int | None"> {
            const auto size = d.itemsize();
            if (!size) return py::none();
            return py::int_(*size);
          },
          "int or None: the bytes of one encoded value (a compound dtype's is the sum of its "
          "fields'); None for an abstract dtype.")
      .def_property_readonly(
          "fields",
          [](const DType& d) {
            py::list out;
            for (const Field& f : d.fields()) {
              out.append(py::make_tuple(f.name, f.dtype));
            }
            return out;
          },
          "list of tuple of (str, DType): a compound dtype's fields in order; empty for a scalar "
          "dtype.")
      .def("__repr__", &DType::name, self_not_none);

  m.attr("Bool") = DType::Bool();
  m.attr("Int32") = DType::Int32();
  m.attr("Float32") = DType::Float32();
  m.attr("Floating") = DType::Floating();
  m.attr("Any") = DType::Any();
  m.def("compound", &compound, R"doc(A compound (record) dtype of named fields, in order.

Call it as ``compound(x=Float32, n=Int32)`` or with one sequence of
``(name, dtype)`` pairs, ``compound([("x", Float32), ("n", Int32)])``. Its item
size is the sum of the fields' item sizes.

Parameters
----------
*args : sequence of tuple of (str, DType)
    At most one sequence of ``(name, dtype)`` pairs.
**kwargs : DType or numpy.dtype or torch.dtype or str
    Fields given by keyword, after the pairs.

Returns
-------
DType
    The compound dtype.

Raises
------
TypeError
    When a field name is not a string, a field's dtype is not a concrete
    scalar dtype (naming the field), a pair is not a pair, or more than one
    positional argument is given.
ValueError
    When there are no fields, or a name is empty or repeated.
)doc");
}

}  // namespace strideweave::bindings
