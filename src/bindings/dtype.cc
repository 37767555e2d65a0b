// Python binding of the logical dtypes (spec/core-tensor-representation).
#include "dtype.h"

#include <string>
#include <vector>

#include "describe.h"
#include "dtype_convert.h"
#include "self_arg.h"
#include "strideweave/dtype/dtype.h"
#include "strideweave/util/error.h"
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
  py::class_<DType> dtype(m, "DType", "A logical dtype: concrete, abstract or compound.");
  def_value_semantics(dtype);
  dtype.def_property_readonly("name", getter<&DType::name>())
      .def_property_readonly("is_concrete", getter<&DType::is_concrete>())
      .def_property_readonly("is_abstract", getter<&DType::is_abstract>())
      .def_property_readonly("is_compound", getter<&DType::is_compound>())
      .def_property_readonly("itemsize",
                             [](const DType& d) -> py::object {
                               const auto size = d.itemsize();
                               if (!size) return py::none();
                               return py::int_(*size);
                             })
      .def_property_readonly("fields",
                             [](const DType& d) {
                               py::list out;
                               for (const Field& f : d.fields()) {
                                 out.append(py::make_tuple(f.name, f.dtype));
                               }
                               return out;
                             })
      .def("__repr__", &DType::name, self_not_none);

  m.attr("Bool") = DType::Bool();
  m.attr("Int32") = DType::Int32();
  m.attr("Float32") = DType::Float32();
  m.attr("Floating") = DType::Floating();
  m.attr("Any") = DType::Any();
  m.def("compound", &compound,
        "compound(x=Float32, n=Int32) or compound([('x', Float32), ('n', Int32)]).");
}

}  // namespace strideweave::bindings
