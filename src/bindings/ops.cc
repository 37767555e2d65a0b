// Python binding of the math operations. Operands are converted here; every
// operation runs in the core (strideweave/ops/math.h). The GIL is released
// around operations on large tensors only: releasing and retaking it costs
// more than a small operation.
#include "ops.h"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "describe.h"
#include "gil.h"
#include "int_convert.h"
#include "strideweave/ops/math.h"
#include "strideweave/tensor/tensor.h"
#include "strideweave/util/error.h"
#include "value_convert.h"

namespace py = pybind11;

namespace strideweave::bindings {

namespace {

// Operations on at least this many elements run without the GIL.
constexpr int64_t kWithoutGilElements = int64_t{1} << 15;

enum class Kind { kAdd, kSub, kMul, kDiv, kEq, kNe, kLt, kLe, kGt, kGe };

// The comparison of a comparison kind; nullopt for an arithmetic one.
std::optional<ops::Comparison> comparison_of(Kind kind) {
  switch (kind) {
    case Kind::kEq:
      return ops::Comparison::kEq;
    case Kind::kNe:
      return ops::Comparison::kNe;
    case Kind::kLt:
      return ops::Comparison::kLt;
    case Kind::kLe:
      return ops::Comparison::kLe;
    case Kind::kGt:
      return ops::Comparison::kGt;
    case Kind::kGe:
      return ops::Comparison::kGe;
    default:
      return std::nullopt;
  }
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kAdd:
      return "add";
    case Kind::kSub:
      return "sub";
    case Kind::kMul:
      return "mul";
    case Kind::kDiv:
      return "div";
    default:
      return ops::comparison_name(*comparison_of(kind));
  }
}

// Runs f() without the GIL when `t` is large.
template <class F>
std::shared_ptr<Tensor> run(const Tensor& t, F&& f) {
  if (!t.is_multi_subtensor() && shape_size(t.shape()) >= kWithoutGilElements) {
    return without_gil(std::forward<F>(f));
  }
  return f();
}

// A binary operand: a Tensor, or a Python int or float (a constant).
struct Operand {
  std::shared_ptr<const Tensor> tensor;
  Value constant;
};

std::optional<Operand> to_operand(py::handle obj) {
  if (py::isinstance<Tensor>(obj)) return Operand{obj.cast<std::shared_ptr<Tensor>>(), Value{}};
  if (PyLong_Check(obj.ptr()) || PyFloat_Check(obj.ptr())) return Operand{nullptr, to_value(obj)};
  return std::nullopt;
}

std::shared_ptr<Tensor> combine(Kind kind, const Operand& a, const Operand& b) {
  const std::optional<ops::Comparison> comparison = comparison_of(kind);
  if (a.tensor && b.tensor) {
    return run(*a.tensor, [&] {
      if (comparison) return ops::compare(*comparison, a.tensor, b.tensor);
      switch (kind) {
        case Kind::kAdd:
          return ops::add(a.tensor, b.tensor);
        case Kind::kSub:
          return ops::sub(a.tensor, b.tensor);
        case Kind::kMul:
          return ops::mul(a.tensor, b.tensor);
        default:  // kDiv: the comparisons returned above
          return ops::div(a.tensor, b.tensor);
      }
    });
  }
  const bool constant_first = !a.tensor;
  const std::shared_ptr<const Tensor>& t = constant_first ? b.tensor : a.tensor;
  const Value& c = constant_first ? a.constant : b.constant;
  return run(*t, [&] {
    if (comparison) return ops::compare(*comparison, t, c, constant_first);
    switch (kind) {
      case Kind::kAdd:
        return ops::add(t, c);
      case Kind::kSub:
        return ops::sub(t, c, constant_first);
      case Kind::kMul:
        return ops::mul(t, c);
      default:  // kDiv: the comparisons returned above
        return ops::div(t, c, constant_first);
    }
  });
}

// sw.add(a, b) and friends: at least one Tensor, the other a Tensor or a
// number; TypeError naming the operation and the operand otherwise.
std::shared_ptr<Tensor> function(Kind kind, py::handle a, py::handle b) {
  const std::optional<Operand> x = to_operand(a);
  const std::optional<Operand> y = to_operand(b);
  for (const auto& [operand, obj] : {std::pair{&x, a}, std::pair{&y, b}}) {
    if (!*operand) {
      throw TypeError(std::string(kind_name(kind)) + ": operand " + describe_object(obj) +
                      " is not a Tensor, an int or a float");
    }
  }
  if (!x->tensor && !y->tensor) {
    throw TypeError(std::string(kind_name(kind)) + ": at least one operand must be a Tensor");
  }
  return combine(kind, *x, *y);
}

// The operator: NotImplemented for an operand it does not know, so Python
// tries the reflected operator and then raises its own TypeError.
// A receiver that is not a Tensor (Tensor.__add__(1, 2)) is TypeError, as for any
// method descriptor.
py::object op(Kind kind, py::handle self, py::handle other, bool reflected) {
  if (!py::isinstance<Tensor>(self)) {
    throw TypeError(std::string("Tensor operator ") + kind_name(kind) + " needs a Tensor, not " +
                    describe_object(self));
  }
  const std::optional<Operand> x = to_operand(self);
  const std::optional<Operand> y = to_operand(other);
  if (!x || !y) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(reflected ? combine(kind, *y, *x) : combine(kind, *x, *y));
}

std::optional<std::vector<int64_t>> to_modes(py::handle modes) {
  if (modes.is_none()) return std::nullopt;
  if (PyIndex_Check(modes.ptr()) && !PyBool_Check(modes.ptr())) {
    return std::vector<int64_t>{to_int64(modes, "sum mode")};
  }
  std::vector<int64_t> out;
  for (py::handle m : py::iter(modes)) out.push_back(to_int64(m, "sum mode"));
  return out;
}

// The Tensor argument `t` of a unary operation; TypeError naming it otherwise (None too).
std::shared_ptr<const Tensor> unary_operand(py::handle t, const char* op) {
  if (!py::isinstance<Tensor>(t)) {
    throw TypeError(std::string(op) + ": " + describe_object(t) + " is not a Tensor");
  }
  return t.cast<std::shared_ptr<Tensor>>();
}

std::shared_ptr<Tensor> neg(py::handle operand) {
  const std::shared_ptr<const Tensor> t = unary_operand(operand, "neg");
  return run(*t, [&] { return ops::neg(t); });
}

std::shared_ptr<Tensor> sum(py::handle operand, py::handle modes) {
  const std::shared_ptr<const Tensor> t = unary_operand(operand, "sum");
  const std::optional<std::vector<int64_t>> converted = to_modes(modes);
  return run(*t, [&] { return ops::sum(t, converted); });
}

}  // namespace

void bind_ops(py::module_& m) {
  m.def(
      "add", [](py::handle a, py::handle b) { return function(Kind::kAdd, a, b); }, py::arg("a"),
      py::arg("b"), "a + b element by element (equal shapes), or a Tensor plus a constant.");
  m.def(
      "sub", [](py::handle a, py::handle b) { return function(Kind::kSub, a, b); }, py::arg("a"),
      py::arg("b"), "a - b element by element (equal shapes), or with a constant.");
  m.def(
      "mul", [](py::handle a, py::handle b) { return function(Kind::kMul, a, b); }, py::arg("a"),
      py::arg("b"), "a * b element by element (equal shapes), or with a constant.");
  m.def(
      "div", [](py::handle a, py::handle b) { return function(Kind::kDiv, a, b); }, py::arg("a"),
      py::arg("b"),
      "a / b element by element (equal shapes), or with a constant: true division of Float32 "
      "operands (Int32 is TypeError: there is no promotion).");
  m.def("neg", &neg, py::arg("t"), "-t element by element.");
  for (const auto& [name, kind, symbol] :
       {std::tuple{"eq", Kind::kEq, "=="}, std::tuple{"ne", Kind::kNe, "!="},
        std::tuple{"lt", Kind::kLt, "<"}, std::tuple{"le", Kind::kLe, "<="},
        std::tuple{"gt", Kind::kGt, ">"}, std::tuple{"ge", Kind::kGe, ">="}}) {
    m.def(
        name, [kind = kind](py::handle a, py::handle b) { return function(kind, a, b); },
        py::arg("a"), py::arg("b"),
        (std::string("a ") + symbol +
         " b element by element (equal shapes), or with a constant: a Bool tensor, recorded by "
         "no autograd node.")
            .c_str());
  }
  m.def("sum", &sum, py::arg("t"), py::arg("modes") = py::none(),
        "The sum over the given top-level modes (every mode when None).");

  auto tensor = py::reinterpret_borrow<py::class_<Tensor, py::smart_holder>>(m.attr("Tensor"));
  tensor.def("__add__", [](py::handle s, py::handle o) { return op(Kind::kAdd, s, o, false); })
      .def("__radd__", [](py::handle s, py::handle o) { return op(Kind::kAdd, s, o, true); })
      .def("__sub__", [](py::handle s, py::handle o) { return op(Kind::kSub, s, o, false); })
      .def("__rsub__", [](py::handle s, py::handle o) { return op(Kind::kSub, s, o, true); })
      .def("__mul__", [](py::handle s, py::handle o) { return op(Kind::kMul, s, o, false); })
      .def("__rmul__", [](py::handle s, py::handle o) { return op(Kind::kMul, s, o, true); })
      .def("__truediv__", [](py::handle s, py::handle o) { return op(Kind::kDiv, s, o, false); })
      .def("__rtruediv__", [](py::handle s, py::handle o) { return op(Kind::kDiv, s, o, true); })
      // Python reflects a comparison by the mirrored operator (2 < t is t > 2).
      .def("__eq__", [](py::handle s, py::handle o) { return op(Kind::kEq, s, o, false); })
      .def("__ne__", [](py::handle s, py::handle o) { return op(Kind::kNe, s, o, false); })
      .def("__lt__", [](py::handle s, py::handle o) { return op(Kind::kLt, s, o, false); })
      .def("__le__", [](py::handle s, py::handle o) { return op(Kind::kLe, s, o, false); })
      .def("__gt__", [](py::handle s, py::handle o) { return op(Kind::kGt, s, o, false); })
      .def("__ge__", [](py::handle s, py::handle o) { return op(Kind::kGe, s, o, false); })
      .def("__neg__", &neg)
      .def("sum", &sum, py::arg("modes") = py::none(),
           "The sum over the given top-level modes (every mode when None).");
  // Defining __eq__ drops the inherited hash; a Tensor hashes by identity, with
  // object's hash function (as PyTorch's tensors do).
  tensor.def("__hash__", [](py::handle self) {
    if (!py::isinstance<Tensor>(self)) {
      throw TypeError("Tensor.__hash__ needs a Tensor, not " + describe_object(self));
    }
    const Py_hash_t hash = PyBaseObject_Type.tp_hash(self.ptr());
    if (hash == -1) throw py::error_already_set();
    return hash;
  });
}

}  // namespace strideweave::bindings
